"""Analysis of sapo run directories: tables, figures and the comparison with the SAPO paper.

Modules, one job each:
  errors     AnalysisError: the one-line message a command prints for bad input
  config     parse the resolved INI text a run stores (config.ini, the HDF5 `config` attribute)
  runs       load a run directory (node_NNNN.h5) or a committed summary (.npz) into one Run
  grouping   group runs into configurations (I/J split and other differing keys), find baselines
  paper      the paper's reported totals and how our splits map onto theirs
  metrics    cumulative reward, moving averages, oscillation, per-config statistics, network
  figures    the PNG figures
  summarize  `python3 -m analysis.summarize RUN_DIR... -o DIR`: small per-run summaries
  report     `python3 -m analysis.report RUN_DIR|SUMMARY... -o OUT_DIR`: REPORT.md + figures
  paired     paired differences over seeds: mean, Student t 95% CI, relative change, significance,
             p-values, the exact sign-flip p, log-ratio CIs (scipy.stats)
  minipaper  `python3 -m analysis.minipaper SUMMARY_DIR -o OUT_DIR`: the two-arm split study's report
  network    `python3 -m analysis.network SUMMARY_DIR -o OUT_DIR --clean-dir DIR`: the network study's report
"""
