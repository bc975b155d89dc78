"""llac's JSON is standard JSON: a number that is not finite (a prediction with no value, an
interval's unbounded region, a p-value that does not exist) is null, never the string "nan"
or Python's NaN/Infinity; a model file reads back as it was, its region's null ends unbounded.
CSV keeps a column's nan and inf."""
import csv
import io
import json
import math
import subprocess
import sys

from support.machines import write_stream_trace
from test_whatif_bsp import SIZES, write_fft_like_trace


def llac(folder, script: str, *options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llac", *options, "-c", script], cwd=folder,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


def strict(text: str) -> list:
    """The JSON documents of `text`, one a line, parsed refusing NaN, Infinity and -Infinity."""
    def refuse(constant):
        raise ValueError(f"not standard JSON: {constant}")
    return [json.loads(line, parse_constant=refuse) for line in text.splitlines() if line.strip()]


def numbers(document) -> list:
    """Every value of a parsed document that is not a container, depth first."""
    if isinstance(document, dict):
        return [v for value in document.values() for v in numbers(value)]
    if isinstance(document, list):
        return [v for value in document for v in numbers(value)]
    return [document]


def test_a_prediction_with_no_value_and_one_that_overflows_are_null(tmp_path):
    write_fft_like_trace(tmp_path / "y.cll.4.dat")
    write_stream_trace(tmp_path / "s.cll.1.dat", SIZES)
    done = llac(tmp_path, 'load "y.cll.4.dat"; set prune off; fit f; predict f N=4096 P=0,2; '
                          'load "s.cll.1.dat"; s = stream formula "s[0] + s[1]*N*log(N)"; fit s; '
                          'predict s N=4096,1e308', "--format", "json")
    assert done.returncode == 0, done.stderr
    documents = strict(done.stdout)
    assert not any(isinstance(v, str) and v.lower() in ("nan", "inf", "-inf") for v in numbers(documents))
    f_rows = next(d for d in documents if d.get("table", "").startswith("prediction by the model of f"))["rows"]
    by_p = {row["P"]: row for row in f_rows}
    assert by_p[0]["predicted [s]"] is None and by_p[0]["low [s]"] is None and by_p[2]["predicted [s]"] > 0
    s_rows = next(d for d in documents if d.get("table", "").startswith("prediction by the model of s"))["rows"]
    assert [row["predicted [s]"] is None for row in s_rows] == [False, True]     # 1e308: inf


def test_a_model_file_is_standard_json_and_reads_back_unbounded(tmp_path):
    write_fft_like_trace(tmp_path / "y.cll.4.dat")
    done = llac(tmp_path, 'load "y.cll.4.dat"; fit f; export f.model "m.json"; show f.model', "--format", "json")
    assert done.returncode == 0, done.stderr
    strict(done.stdout)
    (document,) = strict((tmp_path / "m.json").read_text().replace("\n", " "))
    region = document["pieces"][0]["region"]
    assert region["N"][0] is None and region["N"][1] is None   # one interval: unbounded both ways
    assert_same_predictions(tmp_path, 'load "y.cll.4.dat"; fit f; load "m.json" as m', "f", "m", ("1000000000", "8"))


def test_a_model_file_of_the_older_strings_still_loads(tmp_path):
    write_fft_like_trace(tmp_path / "y.cll.4.dat")
    assert llac(tmp_path, 'load "y.cll.4.dat"; fit f; export f.model "m.json"').returncode == 0
    document = json.loads((tmp_path / "m.json").read_text())
    for piece in document["pieces"]:
        piece["region"] = {v: ["-inf" if low is None else low, "inf" if high is None else high]
                           for v, (low, high) in piece["region"].items()}
        piece["pvalues"] = ["nan" if p is None else p for p in piece["pvalues"]]
    (tmp_path / "old.json").write_text(json.dumps(document))
    assert_same_predictions(tmp_path, 'load "old.json" as m; load "m.json" as n', "m", "n", ("4096", "2"))


def assert_same_predictions(folder, script: str, first: str, second: str, point: tuple[str, str]) -> None:
    """After `script`, models `first` and `second` predict the same at N, P = `point` (as printed)."""
    n, p = point
    done = llac(folder, f"{script}; predict {first} N={n} P={p}; predict {second} N={n} P={p}")
    assert done.returncode == 0, done.stderr
    predicted = [line.split()[2] for line in done.stdout.splitlines() if line.split()[:2] == list(point)]
    assert len(predicted) == 2 and predicted[0] == predicted[1], done.stdout


def test_csv_keeps_nan(tmp_path):
    """A column's values that are not finite stay numbers in CSV (nan, inf), which CSV import
    reads back; a prediction that does not exist is an empty field (test_llac_review21)."""
    write_fft_like_trace(tmp_path / "y.cll.4.dat")
    done = llac(tmp_path, 'load "y.cll.4.dat"; g = f with z = (N - N) / (N - N), w = N / (N - N); show g',
                "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert rows and all(math.isnan(float(r["z"])) and float(r["w"]) == math.inf for r in rows)