"""The one error type of the analysis package: its message is the single line a command
prints (naming the file and what was wrong) before exiting non-zero, never a traceback."""


class AnalysisError(Exception):
    pass
