/* reasoning_gym 0.1.25 `calendar_arithmetic`: seven kinds of calendar question (weekday
 * after an offset, weekday of a date, weekday from a hypothetical January 1, the n-th
 * weekday of a month, counting one weekday or business days in a range, leap years).
 * Generator: rng.choice(tasks) then the kind's own draws, in the package's order, over the
 * proleptic Gregorian calendar of Python's datetime (years 1..9999, date ordinals with
 * 0001-01-01 = 1, Monday = 0) and English names as strftime("%A"/"%B") gives them in the C
 * locale ("%Y" unpadded, as glibc writes years below 1000). Where the package raises (a
 * date outside 1..9999, an empty randint range) or loops forever, generate fails.
 * Verifier: weekday kinds 1.0 for the oracle after strip(), 0.1 for another weekday name,
 * 0.05 when str.title() makes it one; count kinds exp(-5*|a-o|/o) with int() semantics
 * (1/0 when the oracle is 0); leap years strip().lower() equality. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/pyemu/pyjson.h"
#include "tasks/pyemu/pyrandom.h"
#include "tasks/pyemu/pyunicode.h"

#define NAME "calendar_arithmetic"

/* The CalendarTask enum, in its declaration order (the default task list). */
enum {
    CAL_WEEKDAY_OFFSET,
    CAL_WEEKDAY_OF_DATE,
    CAL_WEEKDAY_FROM_FIRST,
    CAL_RECURRING,
    CAL_COUNT_DAYS,
    CAL_COUNT_BUSINESS,
    CAL_IS_LEAP,
    CAL_N_KINDS
};
static const char* const KIND_NAMES[CAL_N_KINDS] = {
    "weekday_offset", "weekday_of_date",     "weekday_of_date_from_first_date", "recurring_event_day",
    "count_days",     "count_business_days", "is_leap_year",
};

static const char* const WEEKDAYS[7] = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                        "Friday", "Saturday", "Sunday"};
static const char* const MONTHS[13] = {"",     "January", "February",  "March",   "April",    "May",     "June",
                                       "July", "August",  "September", "October", "November", "December"};

static const char* const DAY_TEMPLATES[9] = {
    "Answer with the weekday's name (e.g., Monday, Tuesday, etc.).",
    "Provide the full name of the weekday.",
    "State the weekday (Monday through Sunday).",
    "Give the weekday name in full.",
    "Reply with just the weekday name.",
    "Write out the full weekday name.",
    "Respond with the weekday (Monday-Sunday).",
    "Answer using the complete weekday name.",
    "Name the day of the week in full.",
};
static const char* const COUNT_TEMPLATES[8] = {
    "Answer with a number.",
    "Provide the count as a number.",
    "Respond with just the number.",
    "Write the total number.",
    "Give the count numerically.",
    "State the amount as a number.",
    "Reply with the numerical value.",
    "Express your answer as a number.",
};

#define MAX_TASKS 64

typedef struct {
    int64_t year, offset_upper_bound, leap_year_range;
    int tasks[MAX_TASKS];
    int n_tasks;
} CalConfig;

/* task.lower() for the names that can be valid: ASCII letters, plus the Kelvin sign that
 * Python lowercases to 'k'. Returns the kind, or -1. */
static int cal_kind_of(const char* s) {
    char low[64];
    size_t n = 0, len = strlen(s), i = 0;
    while (i < len) {
        uint32_t cp = pyu_next(s, len, &i);
        if (cp == 0x212A) cp = 'k';
        if (cp >= 'A' && cp <= 'Z') cp += 'a' - 'A';
        if (cp >= 0x80 || n + 1 >= sizeof low) return -1;
        low[n++] = (char)cp;
    }
    low[n] = '\0';
    for (int k = 0; k < CAL_N_KINDS; k++)
        if (!strcmp(low, KIND_NAMES[k])) return k;
    return -1;
}

static int cal_config(const cJSON* cfg, CalConfig* c, char* err, size_t errlen) {
    static const char* const keys[] = {"year", "tasks", "offset_upper_bound", "leap_year_range", NULL};
    if (taskcfg_check_keys(cfg, NAME, keys, err, errlen)) return -1;
    if (taskcfg_int(cfg, NAME, "year", 2022, &c->year, err, errlen) ||
        taskcfg_int(cfg, NAME, "offset_upper_bound", 100, &c->offset_upper_bound, err, errlen) ||
        taskcfg_int(cfg, NAME, "leap_year_range", 200, &c->leap_year_range, err, errlen))
        return -1;
    if (c->year <= 0) return set_error(err, errlen, NAME ": year must be a positive integer, got %lld", (long long)c->year);
    const cJSON* t = taskcfg_item(cfg, "tasks");
    if (!t || cJSON_IsNull(t)) {
        c->n_tasks = CAL_N_KINDS;
        for (int k = 0; k < CAL_N_KINDS; k++) c->tasks[k] = k;
        return 0;
    }
    if (!cJSON_IsArray(t)) return set_error(err, errlen, NAME ": config key 'tasks' must be a list of task names");
    c->n_tasks = 0;
    for (const cJSON* s = t->child; s; s = s->next) {
        int k = cJSON_IsString(s) ? cal_kind_of(s->valuestring) : -1;
        if (k < 0)
            return set_error(err, errlen, NAME ": invalid task %s (valid: count_business_days, count_days, is_leap_year, "
                             "recurring_event_day, weekday_of_date, weekday_of_date_from_first_date, weekday_offset)",
                             cJSON_IsString(s) ? s->valuestring : "(not a string)");
        if (c->n_tasks == MAX_TASKS) return set_error(err, errlen, NAME ": at most %d tasks", MAX_TASKS);
        c->tasks[c->n_tasks++] = k;
    }
    /* rng.choice([]) raises IndexError for every item. */
    if (c->n_tasks == 0) return set_error(err, errlen, NAME ": tasks must not be empty");
    return 0;
}

/* ---- the proleptic Gregorian calendar, as datetime.date -------------------------------- */

#define MAX_ORDINAL 3652059 /* date(9999, 12, 31).toordinal() */
#define MAX_TIMEDELTA_DAYS 999999999

typedef struct {
    int year, month, day;
} Ymd;

static int is_leap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

static int days_in_month(int64_t y, int m) {
    static const int dim[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return dim[m] + (m == 2 && is_leap(y));
}

static int64_t ymd_to_ordinal(int y, int m, int d) {
    int64_t p = y - 1;
    int64_t n = p * 365 + p / 4 - p / 100 + p / 400;
    for (int k = 1; k < m; k++) n += days_in_month(y, k);
    return n + d;
}

static Ymd ordinal_to_ymd(int64_t ord) {
    /* Whole 400-, 100-, 4- and 1-year cycles, then months; the last day of a 4-year or
     * 400-year cycle (n1 == 4 or n100 == 4) is December 31 of the year before. */
    int64_t n = ord - 1;
    int64_t n400 = n / 146097;
    n %= 146097;
    int64_t n100 = n / 36524;
    n %= 36524;
    int64_t n4 = n / 1461;
    n %= 1461;
    int64_t n1 = n / 365;
    n %= 365;
    Ymd r;
    int64_t year = n400 * 400 + n100 * 100 + n4 * 4 + n1 + 1;
    if (n1 == 4 || n100 == 4) {
        r.year = (int)(year - 1);
        r.month = 12;
        r.day = 31;
        return r;
    }
    r.year = (int)year;
    int m = 1;
    while (n >= days_in_month(year, m)) n -= days_in_month(year, m++);
    r.month = m;
    r.day = (int)n + 1;
    return r;
}

static int weekday_of(int64_t ord) { return (int)((ord + 6) % 7); }

static void iso_date(int64_t ord, char* out, size_t len) {
    Ymd d = ordinal_to_ymd(ord);
    snprintf(out, len, "%04d-%02d-%02d", d.year, d.month, d.day);
}

/* date + timedelta(days=delta): 0 and the ordinal, or -1 where Python raises
 * OverflowError (delta beyond timedelta's range, or a result outside years 1..9999). */
static int date_add(int64_t ord, int64_t delta, int64_t* out) {
    if (delta > MAX_TIMEDELTA_DAYS || delta < -MAX_TIMEDELTA_DAYS) return -1;
    int64_t r = ord + delta;
    if (r < 1 || r > MAX_ORDINAL) return -1;
    *out = r;
    return 0;
}

/* ---- the seven kinds of question --------------------------------------------------------- */

typedef struct {
    PyRandom* rng;
    const CalConfig* c;
    TextBuf q;
    char answer[32];
    cJSON* meta;
    char* err;
    size_t errlen;
} CalCtx;

static int need_date_year(CalCtx* x) {
    if (x->c->year > 9999)
        return set_error(x->err, x->errlen, NAME ": year %lld is out of range for dates (1..9999)", (long long)x->c->year);
    return 0;
}

/* _random_date_for_year */
static int64_t random_date_for_year(CalCtx* x, int year) {
    int month = (int)pyrandom_randint(x->rng, 1, 12);
    int day = (int)pyrandom_randint(x->rng, 1, days_in_month(year, month));
    return ymd_to_ordinal(year, month, day);
}

/* _random_date_between: -1 (ValueError) when start > end. */
static int random_date_between(CalCtx* x, int64_t start, int64_t end, int64_t* out) {
    if (start > end) return set_error(x->err, x->errlen, NAME ": start_date must be <= end_date (offset_upper_bound < 0?)");
    *out = start + pyrandom_randint(x->rng, 0, end - start);
    return 0;
}

static const char* choose(CalCtx* x, const char* const* list, size_t n) {
    return list[pyrandom_choice_index(x->rng, n)];
}

static int overflow_error(CalCtx* x) {
    return set_error(x->err, x->errlen, NAME ": date arithmetic outside years 1..9999 (Python raises OverflowError)");
}

static int kind_weekday_offset(CalCtx* x) {
    if (need_date_year(x)) return -1;
    int64_t start = random_date_for_year(x, (int)x->c->year);
    if (x->c->offset_upper_bound < 1)
        return set_error(x->err, x->errlen, NAME ": offset_upper_bound must be >= 1 for weekday_offset (empty randint range)");
    int64_t offset = pyrandom_randint(x->rng, 1, x->c->offset_upper_bound);
    int64_t sign = pyrandom_choice_index(x->rng, 2) == 0 ? -1 : 1;
    int64_t offset_days = sign * offset;
    int64_t target = 0;
    if (date_add(start, offset_days, &target)) return overflow_error(x);
    Ymd s = ordinal_to_ymd(start);
    char date_str[96];
    snprintf(date_str, sizeof date_str, "%s, %s %d, %d", WEEKDAYS[weekday_of(start)], MONTHS[s.month], s.day, s.year);
    long long k = (long long)(offset_days < 0 ? -offset_days : offset_days);
    int t = (int)pyrandom_choice_index(x->rng, 3);
    if (offset_days >= 0) {
        if (t == 0) textbuf_printf(&x->q, "If today is %s, what day of the week will it be in %lld days? ", date_str, k);
        else if (t == 1) textbuf_printf(&x->q, "Starting from %s, which weekday falls after a %lld-day jump? ", date_str, k);
        else textbuf_printf(&x->q, "Count forward %lld days from %s - what's the weekday? ", k, date_str);
    } else {
        if (t == 0) textbuf_printf(&x->q, "If today is %s, what day of the week was it %lld days ago? ", date_str, k);
        else if (t == 1) textbuf_printf(&x->q, "Starting from %s, which weekday was it %lld days before? ", date_str, k);
        else textbuf_printf(&x->q, "Count backward %lld days from %s - what's the weekday? ", k, date_str);
    }
    textbuf_append(&x->q, choose(x, DAY_TEMPLATES, 9));
    snprintf(x->answer, sizeof x->answer, "%s", WEEKDAYS[weekday_of(target)]);
    char iso[16];
    cJSON_AddStringToObject(x->meta, "task", KIND_NAMES[CAL_WEEKDAY_OFFSET]);
    iso_date(start, iso, sizeof iso);
    cJSON_AddStringToObject(x->meta, "start_date", iso);
    cJSON_AddNumberToObject(x->meta, "offset_days", (double)offset_days);
    iso_date(target, iso, sizeof iso);
    cJSON_AddStringToObject(x->meta, "target_date", iso);
    return 0;
}

static int kind_weekday_of_date(CalCtx* x) {
    if (need_date_year(x)) return -1;
    int year = (int)x->c->year;
    int64_t target = random_date_for_year(x, year);
    Ymd d = ordinal_to_ymd(target);
    int t = (int)pyrandom_choice_index(x->rng, 3);
    if (t == 0) textbuf_printf(&x->q, "What day of the week was %s %d, %d?", MONTHS[d.month], d.day, year);
    else if (t == 1) textbuf_printf(&x->q, "On which weekday did %s %d, %d fall?", MONTHS[d.month], d.day, year);
    else textbuf_printf(&x->q, "Name the day of the week for %02d/%02d/%d.", d.month, d.day, d.year);
    textbuf_printf(&x->q, " %s", choose(x, DAY_TEMPLATES, 9));
    snprintf(x->answer, sizeof x->answer, "%s", WEEKDAYS[weekday_of(target)]);
    char iso[16];
    iso_date(target, iso, sizeof iso);
    cJSON_AddStringToObject(x->meta, "task", KIND_NAMES[CAL_WEEKDAY_OF_DATE]);
    cJSON_AddStringToObject(x->meta, "target_date", iso);
    return 0;
}

static int kind_weekday_from_first(CalCtx* x) {
    if (need_date_year(x)) return -1;
    int year = (int)x->c->year;
    int first_day = (int)pyrandom_randint(x->rng, 0, 6);
    int64_t year_start = ymd_to_ordinal(year, 1, 1), year_end = ymd_to_ordinal(year, 12, 31);
    int64_t max_date;
    if (date_add(year_start, x->c->offset_upper_bound, &max_date)) return overflow_error(x);
    if (max_date > year_end) max_date = year_end;
    /* The package redraws until the date is not January 1: with no other date to draw it
     * never stops. */
    if (max_date == year_start)
        return set_error(x->err, x->errlen, NAME ": offset_upper_bound 0 makes weekday_of_date_from_first_date loop forever");
    int64_t target = 0;
    do {
        if (random_date_between(x, year_start, max_date, &target)) return -1;
    } while (target == year_start);
    int64_t delta = target - year_start;
    int answer_index = (int)((first_day + delta) % 7);
    Ymd d = ordinal_to_ymd(target);
    const char* fd = WEEKDAYS[first_day];
    int t = (int)pyrandom_choice_index(x->rng, 3);
    if (t == 0)
        textbuf_printf(&x->q, "If the first day of the year was a %s, what day of the week will %s %d be? ", fd,
                       MONTHS[d.month], d.day);
    else if (t == 1)
        textbuf_printf(&x->q, "Given that January 1 fell on a %s, which weekday occurs on %s %d? ", fd, MONTHS[d.month],
                       d.day);
    else
        textbuf_printf(&x->q, "In a year where %s is January 1st, name the weekday of %s %d. ", fd, MONTHS[d.month],
                       d.day);
    textbuf_append(&x->q, choose(x, DAY_TEMPLATES, 9));
    snprintf(x->answer, sizeof x->answer, "%s", WEEKDAYS[answer_index]);
    char iso[16];
    iso_date(target, iso, sizeof iso);
    cJSON_AddStringToObject(x->meta, "task", KIND_NAMES[CAL_WEEKDAY_FROM_FIRST]);
    cJSON_AddNumberToObject(x->meta, "year", year);
    cJSON_AddStringToObject(x->meta, "first_day", fd);
    cJSON_AddStringToObject(x->meta, "target_date", iso);
    cJSON_AddNumberToObject(x->meta, "delta_days", (double)delta);
    return 0;
}

static int kind_recurring(CalCtx* x) {
    static const char* const ordinals[5] = {"first", "second", "third", "fourth", "last"};
    int64_t year = x->c->year;
    int month = (int)pyrandom_randint(x->rng, 1, 12);
    int ordinal = (int)pyrandom_choice_index(x->rng, 5);
    int weekday = (int)pyrandom_randint(x->rng, 0, 6);
    /* date(year, month, day) in the search below raises for years past 9999. */
    if (need_date_year(x)) return -1;
    int last_day = days_in_month(year, month);
    int event_day = -1;
    if (ordinal < 4) {
        int count = 0;
        for (int day = 1; day <= last_day && event_day < 0; day++)
            if (weekday_of(ymd_to_ordinal((int)year, month, day)) == weekday && ++count == ordinal + 1) event_day = day;
    } else {
        for (int day = last_day; day >= 1 && event_day < 0; day--)
            if (weekday_of(ymd_to_ordinal((int)year, month, day)) == weekday) event_day = day;
    }
    const char* o = ordinals[ordinal];
    const char* w = WEEKDAYS[weekday];
    const char* mn = MONTHS[month];
    long long y = (long long)year;
    int t = (int)pyrandom_choice_index(x->rng, 3);
    if (t == 0)
        textbuf_printf(&x->q, "If a meeting is scheduled on the %s %s of %s %lld, on which day of the month does it occur? ",
                       o, w, mn, y);
    else if (t == 1)
        textbuf_printf(&x->q,
                       "In %s %lld, if an event recurs on the %s %s, what is the date (day of the month) of the event? ",
                       mn, y, o, w);
    else textbuf_printf(&x->q, "Determine the day of the month for the %s %s in %s %lld. ", o, w, mn, y);
    textbuf_append(&x->q, choose(x, COUNT_TEMPLATES, 8));
    textbuf_append(&x->q, " Answer with -1 if the ordinal does not exist in the month.");
    snprintf(x->answer, sizeof x->answer, "%d", event_day);
    cJSON_AddStringToObject(x->meta, "task", KIND_NAMES[CAL_RECURRING]);
    cJSON_AddNumberToObject(x->meta, "year", (double)year);
    cJSON_AddNumberToObject(x->meta, "month", month);
    cJSON_AddStringToObject(x->meta, "ordinal", o);
    cJSON_AddStringToObject(x->meta, "weekday", w);
    return 0;
}

/* "%A, %B" of a date followed by " %d" of its day, as the count templates write it. */
static void weekday_month_day(int64_t ord, char* out, size_t len) {
    Ymd d = ordinal_to_ymd(ord);
    snprintf(out, len, "%s, %s %d", WEEKDAYS[weekday_of(ord)], MONTHS[d.month], d.day);
}

static int kind_count_days(CalCtx* x) {
    if (need_date_year(x)) return -1;
    int year = (int)x->c->year;
    int64_t year_start = ymd_to_ordinal(year, 1, 1), year_end = ymd_to_ordinal(year, 12, 31);
    int64_t start = 0, end = 0, limit = 0;
    if (random_date_between(x, year_start, year_end, &start)) return -1;
    if (date_add(start, x->c->offset_upper_bound, &limit)) return overflow_error(x);
    if (limit > year_end) limit = year_end;
    if (random_date_between(x, start, limit, &end)) return -1;
    int weekday = (int)pyrandom_randint(x->rng, 0, 6);
    int64_t count = 0;
    for (int64_t d = start; d <= end; d++) count += weekday_of(d) == weekday;
    char s[64], e[64];
    weekday_month_day(start, s, sizeof s);
    weekday_month_day(end, e, sizeof e);
    const char* w = WEEKDAYS[weekday];
    int t = (int)pyrandom_choice_index(x->rng, 3);
    if (t == 0)
        textbuf_printf(&x->q, "How many %ss are there from %s, %d to %s, %d (inclusive of both dates)? ", w, s, year, e,
                       year);
    else if (t == 1)
        textbuf_printf(&x->q, "Count the occurrences of %s from %s to %s, %d (including both start and end dates). ", w, s,
                       e, year);
    else
        textbuf_printf(&x->q, "Between %s, %d and %s, %d (counting both dates), how many times does %s occur? ", s, year, e,
                       year, w);
    textbuf_append(&x->q, choose(x, COUNT_TEMPLATES, 8));
    snprintf(x->answer, sizeof x->answer, "%lld", (long long)count);
    char iso[16];
    cJSON_AddStringToObject(x->meta, "task", KIND_NAMES[CAL_COUNT_DAYS]);
    cJSON_AddNumberToObject(x->meta, "year", year);
    iso_date(start, iso, sizeof iso);
    cJSON_AddStringToObject(x->meta, "start_date", iso);
    iso_date(end, iso, sizeof iso);
    cJSON_AddStringToObject(x->meta, "end_date", iso);
    return 0;
}

static int kind_count_business(CalCtx* x) {
    if (need_date_year(x)) return -1;
    int year = (int)x->c->year;
    int64_t year_start = ymd_to_ordinal(year, 1, 1), year_end = ymd_to_ordinal(year, 12, 31);
    int64_t start = 0, end = 0, limit = 0;
    if (random_date_between(x, year_start, year_end, &start)) return -1;
    if (date_add(start, x->c->offset_upper_bound, &limit)) return overflow_error(x);
    if (random_date_between(x, start, limit, &end)) return -1;
    /* The package's count: five per whole week, then the leftover days one by one. */
    int64_t days = end - start + 1;
    int64_t count = days / 7 * 5;
    int start_weekday = weekday_of(start);
    for (int64_t i = 0; i < days % 7; i++) count += (start_weekday + i) % 7 < 5;
    char s[64], e[64];
    weekday_month_day(start, s, sizeof s);
    weekday_month_day(end, e, sizeof e);
    int t = (int)pyrandom_choice_index(x->rng, 3);
    if (t == 0)
        textbuf_printf(&x->q,
                       "How many business days (Monday-Friday) are there from %s, %d to %s, %d (inclusive of both dates)? ",
                       s, year, e, year);
    else if (t == 1)
        textbuf_printf(&x->q,
                       "Count the weekdays (excluding weekends) from %s to %s, %d (including both start and end dates). ",
                       s, e, year);
    else
        textbuf_printf(&x->q,
                       "Between %s, %d and %s, %d (counting both dates), what's the total count of business days "
                       "(Monday through Friday)? ",
                       s, year, e, year);
    textbuf_append(&x->q, choose(x, COUNT_TEMPLATES, 8));
    snprintf(x->answer, sizeof x->answer, "%lld", (long long)count);
    char iso[16];
    cJSON_AddStringToObject(x->meta, "task", KIND_NAMES[CAL_COUNT_BUSINESS]);
    iso_date(start, iso, sizeof iso);
    cJSON_AddStringToObject(x->meta, "start_date", iso);
    iso_date(end, iso, sizeof iso);
    cJSON_AddStringToObject(x->meta, "end_date", iso);
    return 0;
}

/* Python's floor division by 2. */
static int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

static int kind_is_leap(CalCtx* x) {
    int64_t semirange = floor_half(x->c->leap_year_range);
    if (semirange < 0)
        return set_error(x->err, x->errlen, NAME ": leap_year_range must be >= 0 (empty randint range)");
    int64_t year = pyrandom_randint(x->rng, x->c->year - semirange, x->c->year + semirange);
    int leap = is_leap(year);
    long long y = (long long)year;
    int t = (int)pyrandom_choice_index(x->rng, 3);
    if (t == 0) textbuf_printf(&x->q, "Determine if the year %lld is a leap year. ", y);
    else if (t == 1) textbuf_printf(&x->q, "Is %lld a leap year? ", y);
    else textbuf_printf(&x->q, "Tell me whether %lld is a leap year. ", y);
    textbuf_append(&x->q, "Answer with Yes or No.");
    snprintf(x->answer, sizeof x->answer, "%s", leap ? "Yes" : "No");
    cJSON_AddStringToObject(x->meta, "task", KIND_NAMES[CAL_IS_LEAP]);
    cJSON_AddNumberToObject(x->meta, "year", (double)year);
    cJSON_AddBoolToObject(x->meta, "is_leap", leap);
    return 0;
}

static int cal_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err, size_t errlen) {
    CalConfig c;
    if (cal_config(config, &c, err, errlen)) return -1;
    PyRandom rng;
    pyrandom_seed(&rng, seed + index);
    CalCtx x = {.rng = &rng, .c = &c, .meta = cJSON_CreateObject(), .err = err, .errlen = errlen};
    int kind = c.tasks[pyrandom_choice_index(&rng, (size_t)c.n_tasks)];
    int rc;
    switch (kind) {
        case CAL_WEEKDAY_OFFSET: rc = kind_weekday_offset(&x); break;
        case CAL_WEEKDAY_OF_DATE: rc = kind_weekday_of_date(&x); break;
        case CAL_WEEKDAY_FROM_FIRST: rc = kind_weekday_from_first(&x); break;
        case CAL_RECURRING: rc = kind_recurring(&x); break;
        case CAL_COUNT_DAYS: rc = kind_count_days(&x); break;
        case CAL_COUNT_BUSINESS: rc = kind_count_business(&x); break;
        default: rc = kind_is_leap(&x); break;
    }
    if (rc) {
        textbuf_free(&x.q);
        cJSON_Delete(x.meta);
        return -1;
    }
    cJSON_AddStringToObject(x.meta, "source_dataset", NAME);
    cJSON_AddNumberToObject(x.meta, "source_index", (double)index);
    cJSON* diff = cJSON_AddObjectToObject(x.meta, "difficulty");
    cJSON* tasks = cJSON_AddArrayToObject(diff, "tasks");
    for (int i = 0; i < c.n_tasks; i++) cJSON_AddItemToArray(tasks, cJSON_CreateString(KIND_NAMES[c.tasks[i]]));
    cJSON_AddNumberToObject(diff, "offset_upper_bound", (double)c.offset_upper_bound);
    out->question = textbuf_take(&x.q);
    out->answer = strdup(x.answer);
    if (!out->answer) sapo_die("out of memory");
    out->metadata = x.meta;
    return 0;
}

/* ---- verifier ------------------------------------------------------------------------ */

/* Whether the text s[0..len) is exactly the NUL-free string word. */
static int text_is(const char* s, size_t len, const char* word) { return strlen(word) == len && !memcmp(s, word, len); }

/* The weekday that s[0..len) is exactly, or -1. */
static int weekday_exact(const char* s, size_t len) {
    for (int k = 0; k < 7; k++)
        if (text_is(s, len, WEEKDAYS[k])) return k;
    return -1;
}

/* Whether s.title() is a weekday name. Every name is one cased word, so the first code
 * point must titlecase to its capital (an ASCII letter, or U+017F LONG S for 'S') and
 * every later one lowercase to its letter (an ASCII letter, or U+212A KELVIN SIGN for
 * 'k'); no other code point title- or lowercases into ASCII letters one-for-one. */
static int weekday_title(const char* s, size_t len) {
    char buf[16];
    size_t n = 0, i = 0;
    while (i < len) {
        uint32_t cp = pyu_next(s, len, &i);
        if (n == 0) {
            if (cp == 0x17F) cp = 'S';
            else if (cp >= 'a' && cp <= 'z') cp -= 'a' - 'A';
            else if (!(cp >= 'A' && cp <= 'Z')) return 0;
        } else {
            if (cp == 0x212A) cp = 'k';
            else if (cp >= 'A' && cp <= 'Z') cp += 'a' - 'A';
            else if (!(cp >= 'a' && cp <= 'z')) return 0;
        }
        if (n + 1 >= sizeof buf) return 0;
        buf[n++] = (char)cp;
    }
    return weekday_exact(buf, n) >= 0;
}

/* str.lower() of s[0..len) appended to b: ASCII capitals, U+212A -> 'k' and U+0130 ->
 * "i\u0307" as Python maps them; other code points are kept (the oracles are ASCII, and no
 * other code point lowercases into ASCII). */
static void py_lower(TextBuf* b, const char* s, size_t len) {
    size_t i = 0;
    while (i < len) {
        size_t at = i;
        uint32_t cp = pyu_next(s, len, &i);
        if (cp >= 'A' && cp <= 'Z') {
            char c = (char)(cp + 'a' - 'A');
            textbuf_append_n(b, &c, 1);
        } else if (cp == 0x212A) textbuf_append(b, "k");
        else if (cp == 0x130) textbuf_append(b, "i\xCC\x87");
        else textbuf_append_n(b, s + at, i - at);
    }
    if (!b->data) textbuf_append(b, "");
}

static double score_count(const char* answer, size_t len, const char* oracle, size_t oracle_len) {
    if (!oracle) return 0.0; /* None.strip(): AttributeError, caught */
    size_t b, e;
    PyInt a, o;
    pyu_strip(answer, len, &b, &e);
    if (pyu_parse_int(answer + b, e - b, &a)) return 0.0;
    pyu_strip(oracle, oracle_len, &b, &e);
    if (pyu_parse_int(oracle + b, e - b, &o)) return 0.0;
    /* An answer beyond int64 against a generated oracle (a count of at most a few hundred)
     * has exp(-5*|a-o|/o) == 0. Python returns 0 too, or raises OverflowError once |a-o|/o
     * passes ~1e308 (about 309 digits); a raise is scored 0 here. Oracles beyond int64
     * are never generated; one in a forged entry scores 0 (Python would compute it). */
    if (o.big) return 0.0;
    if (o.value == 0) return (!a.big && a.value == 0) ? 1.0 : 0.0;
    if (a.big) return 0.0;
    __int128 diff = (__int128)a.value - (__int128)o.value;
    if (diff < 0) diff = -diff;
    double rel = (double)diff / (double)o.value;
    double r = exp(-5 * rel);
    if (isinf(r)) return 0.0; /* math.exp raises OverflowError (negative oracles only) */
    return r > 0.0 ? r : 0.0;
}

static double cal_score(const char* answer, size_t len, const cJSON* entry) {
    if (!answer || !len) return 0.0;
    const cJSON* meta = task_entry_metadata(entry);
    size_t tlen, oracle_len = 0, b, e;
    const char* t = pyjson_string(meta ? cJSON_GetObjectItemCaseSensitive(meta, "task") : NULL, &tlen);
    if (!t) return 0.0;
    const char* oracle = task_entry_answer(entry, &oracle_len);
    if (text_is(t, tlen, "weekday_offset") || text_is(t, tlen, "weekday_of_date_from_first_date") ||
        text_is(t, tlen, "weekday_of_date")) {
        pyu_strip(answer, len, &b, &e);
        const char* s = answer + b;
        size_t n = e - b;
        if (oracle && oracle_len == n && !memcmp(s, oracle, n)) return 1.0;
        if (weekday_exact(s, n) >= 0) return 0.1;
        if (weekday_title(s, n)) return 0.05;
        return 0.0;
    }
    if (text_is(t, tlen, "count_business_days") || text_is(t, tlen, "count_days") || text_is(t, tlen, "recurring_event_day"))
        return score_count(answer, len, oracle, oracle_len);
    if (text_is(t, tlen, "is_leap_year")) {
        if (!oracle) return 0.0; /* None.lower() raises; see the report */
        pyu_strip(answer, len, &b, &e);
        TextBuf la = {0}, lo = {0};
        py_lower(&la, answer + b, e - b);
        py_lower(&lo, oracle, oracle_len);
        int eq = la.len == lo.len && !memcmp(la.data, lo.data, la.len);
        textbuf_free(&la);
        textbuf_free(&lo);
        return eq ? 1.0 : 0.0;
    }
    return 0.0;
}

const TaskSpec task_calendar_arithmetic = {
    .name = NAME,
    .generate = cal_generate,
    .score = cal_score,
    .preset_paper = "{\"year\": 2023, \"offset_upper_bound\": 100, \"leap_year_range\": 200, "
                    "\"tasks\": [\"count_days\", \"weekday_of_date\", \"is_leap_year\", \"recurring_event_day\"]}",
    .preset_small = "{\"year\": 2023, \"offset_upper_bound\": 30, \"leap_year_range\": 200, "
                    "\"tasks\": [\"count_days\", \"weekday_of_date\", \"is_leap_year\"]}",
    .preset_tiny = "{\"year\": 2023, \"offset_upper_bound\": 7, \"leap_year_range\": 40, "
                   "\"tasks\": [\"count_days\", \"is_leap_year\"]}",
};
