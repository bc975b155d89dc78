"""What session 40 fixed in llac from a review that checked its numbers against independent
computations: records left out without a word (aggregate, describe, a CSV load with nothing
to fit), describe counting them as repetitions, ranges that drifted off their decimal values,
Python-only numbers in CSV files, and help and docs that did not say what llac does."""
import json
import subprocess
import sys
from pathlib import Path

from support.commands import llac

DOCS = Path(__file__).resolve().parent.parent / "docs"
FORMULA = 'formula "f[0]+f[1]*N"'
# N=10: one record of 3 invalid; N=20: 2 of 5; N=40: inf; 4 of 15 records invalid in all
Z = ("N,time\n10,1e-6\n10,0\n10,1.2e-6\n20,2e-6\n20,-1\n20,nan\n20,2.2e-6\n20,2.4e-6\n40,4e-6\n40,inf\n"
     "80,8.1e-6\n80,8e-6\n160,1.6e-5\n160,1.7e-5\n320,3.2e-5\n")
# N=20: every record invalid, the point vanishes
Z2 = "N,time\n10,1e-6\n20,0\n20,nan\n40,4e-6\n80,8e-6\n"
FIT_WORDS = "records excluded: NaN, inf or non-positive time"


def llac_json(folder, script: str) -> list:
    done = subprocess.run([sys.executable, "-m", "llac", "--format", "json", "-c", script], cwd=folder,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_aggregate_says_what_it_left_out_as_the_fit_does_and_names_the_points_gone(tmp_path):
    """A review: `a = aggregate f by min` made 3 records of z2's 4 sample points without a word."""
    (tmp_path / "z2.csv").write_text(Z2)
    (tmp_path / "z.csv").write_text(Z)
    status, out, err = llac(tmp_path, f'load "z2.csv" as f {FORMULA}; a = aggregate f by min; fit f')
    assert status == 0 and "created a: 3 records" in out, err
    assert f"warning: 2 {FIT_WORDS}; sample point N=20 has only such records and is left out" in err, err
    assert f"warning: 2 {FIT_WORDS}" in out, out        # the fit's warning, in the same words
    status, out, err = llac(tmp_path, f'load "z.csv" as f {FORMULA}; a = aggregate f by min; show a')
    assert status == 0 and f"warning: 4 {FIT_WORDS}\n" in err and "sample point" not in err, err
    counts = {line.split()[0]: line.split()[-1] for line in out.splitlines() if line.strip()[:1].isdigit()}
    assert counts["10"] == "2" and counts["20"] == "3", out
    status, _, err = llac(tmp_path, f'load "z.csv" as f {FORMULA}; b = f where time > 0 and time < 1; '
                                    f'a = aggregate b by min')
    assert status == 0 and "excluded" not in err, err


def test_describe_counts_the_records_a_fit_uses_and_says_how_many_it_left_out(tmp_path):
    """A review: describe gave N=10 3 repetitions (the fit uses 2), `repetitions per point:
    1..5`, and counted nan and -1 among the time's distinct values."""
    (tmp_path / "z.csv").write_text(Z)
    (tmp_path / "z2.csv").write_text(Z2)
    status, out, err = llac(tmp_path, f'load "z.csv" as f {FORMULA}; describe f')
    assert status == 0, err
    assert "11 records at 6 sample points; repetitions per point: 1..3 (of 15 records)" in out, out
    assert f"4 {FIT_WORDS} (as in a fit: the figures here are of the other 11)" in out, out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()[:1].isdigit()}
    assert rows["10"][0] == "2" and rows["20"][0] == "3" and rows["40"][0] == "1", out
    time = next(line.split() for line in out.splitlines() if line.startswith("time "))
    assert time[1:] == ["1e-06", "3.2e-05", "11"], out
    status, out, err = llac(tmp_path, f'load "z2.csv" as f {FORMULA}; describe f')
    assert status == 0 and "3 records at 3 sample points" in out, err
    assert "sample point N=20 has only such records and is left out" in out, out
    status, out, err = llac(tmp_path, f'load "z2.csv" as f {FORMULA}; g = f where N != 20; describe g')
    assert status == 0 and "excluded" not in out and "(of " not in out, out


def test_the_method_says_the_noise_factors_typical_spread_is_the_whole_datas():
    """A review: §2 did not say that s0 is taken over all the data for every interval of a split."""
    section = (DOCS / "method.md").read_text().split("## 2.")[1].split("## 3.")[0]
    assert "every interval of a split" in section and "before any split" in section
    assert "not the median over its own points" in section


def test_ranges_are_decimal_values_and_never_pass_their_end(tmp_path):
    """A review: `N=0.1..1 step 0.1` predicted at 0.7999999999999999 and 0.9999999999999999;
    `N=1..2 step 0.1` ended at 2.000000000000001."""
    (tmp_path / "z.csv").write_text(Z)
    docs = llac_json(tmp_path, f'load "z.csv" as f {FORMULA}; fit f; predict f N=0.1..1 step 0.1; '
                               f'predict f N=1..2 step 0.1; predict f N=0.5..3 *1.5; predict f N=-1..1 step 0.25')
    tables = [d for d in docs if str(d.get("table", "")).startswith("prediction")]
    values = [[row["N"] for row in t["rows"]] for t in tables]
    assert values[0] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1], values[0]
    assert values[1] == [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2], values[1]
    assert values[2] == [0.5, 0.75, 1.125, 1.6875, 2.53125], values[2]
    assert values[3] == [-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1], values[3]


def test_csv_numbers_are_what_c_reads_not_python_extras(tmp_path):
    """A review: `1_000` loaded as 1000 and full-width `１６` as 16."""
    (tmp_path / "odd.csv").write_text("N,time\n1_000,1e-6\n2000,2e-6\n 4000 ,4e-6\n\"8000\",8e-6\n"
                                      "１６,1e-7\n32000,  3.2e-5\n64000,6.4E-5 \n128000,NaN\n"
                                      "256000,2.56e-4\n512000,+5.12e-4\n1024000,.001\n", encoding="utf-8")
    status, out, err = llac(tmp_path, f'load "odd.csv" as f {FORMULA}; show f')
    assert status == 0 and "created f: 9 records" in out, out + err
    assert "odd.csv:2: '1_000' in column 'N' is not a number; the row is ignored" in err, err
    assert "odd.csv:6: '１６' in column 'N' is not a number; the row is ignored" in err, err
    assert " 16 " not in out and "1000 " not in out.split("2000")[0], out


def test_table3_help_says_time_is_summarised_as_in_the_fit(tmp_path):
    """A review: the help said TIME is aggregated `as set aggregate says`, but after `fit f;
    set aggregate mean` Table 3 (rightly) uses the fit's estimator."""
    status, out, err = llac(tmp_path, "help table3")
    assert status == 0 and "as `set aggregate` says" not in out, out
    assert "the estimator the model was fitted with" in " ".join(out.split()), out
    rows = "".join(f"{n},{p},{t * (1 + 0.02 * r)}\n" for n in (1000, 2000, 4000, 8000, 16000) for p in (1, 2, 4)
                   for r in range(3) for t in [1e-6 + 1e-9 * n / p])
    (tmp_path / "p.csv").write_text("N,P,time\n" + rows)
    status, out, err = llac(tmp_path, 'load "p.csv" as f formula "f[0]+f[1]*N/P"; fit f; set aggregate mean; '
                                      'predict f at f by P')
    assert status == 0 and "TIME: the min of the records at each point (as in the fit)" in out, out + err


def test_describe_names_the_spread_column_alike_with_or_without_repetitions(tmp_path):
    """A review: JSON named the column `spread` when no point had two repetitions, else `spread %`."""
    (tmp_path / "one.csv").write_text("N,time\n" + "".join(f"{n},{n * 1e-9}\n" for n in (10, 20, 40, 80)))
    (tmp_path / "two.csv").write_text("N,time\n" + "".join(f"{n},{n * 1e-9}\n{n},{n * 1.1e-9}\n"
                                                           for n in (10, 20, 40, 80)))
    for name in ("one", "two"):
        table = llac_json(tmp_path, f'load "{name}.csv" as f {FORMULA}; describe f')[-1]
        assert table["columns"] == ["N", "repetitions", "spread %", "noisy"], table
    assert abs(table["rows"][0]["spread %"] - 5) < 1e-9     # (median - min) / min of 1 and 1.1
    assert llac_json(tmp_path, f'load "one.csv" as f {FORMULA}; describe f')[-1]["rows"][0]["spread %"] is None
    status, out, err = llac(tmp_path, f'load "one.csv" as f {FORMULA}; describe f')
    assert status == 0 and ["10", "1", "-"] in [line.split() for line in out.splitlines()], out   # '-' in text


def test_a_csv_load_with_nothing_to_fit_says_why(tmp_path):
    """A review: a CSV with no valid rows loaded as `created f: 0 records` with no word until `fit`."""
    (tmp_path / "header.csv").write_text("N,time\n")
    (tmp_path / "bad.csv").write_text("N,time\n10,abc\n20,x\n")
    (tmp_path / "zero.csv").write_text("N,time\n10,0\n20,nan\n")
    status, out, err = llac(tmp_path, f'load "header.csv" as f {FORMULA}; load "bad.csv" as g {FORMULA}; '
                                      f'load "zero.csv" as h {FORMULA}')
    assert status == 0, err
    assert "warning: f holds no records: its file has no data rows, only the header row; there is nothing " \
           "to fit" in err, err
    assert "warning: g holds no records: every data row of its file was ignored (the warnings above say " \
           "why); there is nothing to fit" in err, err
    assert f"warning: h has no record a fit can use: 2 {FIT_WORDS}" in err, err
    (tmp_path / "z2.csv").write_text(Z2)
    status, out, err = llac(tmp_path, f'load "z2.csv" as k {FORMULA}')
    assert status == 0 and err == "", err


def test_csv_hexadecimal_and_nan_payloads_are_not_numbers_either(tmp_path):
    """Review 42: the docs called hexadecimal one of Python's extras (it is strtod's); llac
    refuses it, and strtod's nan(123), as the docs now say."""
    (tmp_path / "hex.csv").write_text("N,time\n1,0x10\n2,5e-6\n3,nan(1)\n4,3e-6\n")
    status, out, err = llac(tmp_path, f'load "hex.csv" as f {FORMULA}; show f')
    assert status == 0 and "created f: 2 records" in out, out + err
    assert "hex.csv:2: '0x10' in column 'time' is not a number; the row is ignored" in err, err
    assert "hex.csv:4: 'nan(1)' in column 'time' is not a number; the row is ignored" in err, err
