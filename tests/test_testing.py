"""Regression gates on real Cranfield runs: identical reports pass, a degraded recipe fails with
score, mode and delta in the message, noise passes, unusable input is refused (CLI exit 2)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from heta_notebook.cli import main
from heta_notebook.schema import BenchmarkManifest
from heta_notebook.testing import (
    GateInputError,
    RegressionError,
    assert_no_regression,
    assert_scores,
    check_regression,
    parse_floor,
    slim_report,
)
from tests import _gate_helpers as gates

pytestmark = pytest.mark.slow  # two real Cranfield runs (shared by the module)


@pytest.fixture(scope="module")
def base():
    return gates.baseline()


@pytest.fixture(scope="module")
def worse():
    return gates.degraded()


def test_identical_reports_pass_and_write_the_page(base, tmp_path):
    result = assert_no_regression(base, base, output_dir=tmp_path)
    assert result.passed and len(result.rows) == 1
    assert result.rows.loc[0, "delta"] == 0
    assert result.page is not None and result.page.parent == tmp_path.resolve()
    page = result.page.read_text()
    assert "Regression gate passed" in page and "beir_ndcg@10" in page


def test_degraded_recipe_fails_naming_score_mode_delta_and_examples(base, worse, tmp_path):
    with pytest.raises(RegressionError) as caught:
        assert_no_regression(
            worse, base, scores=("beir_ndcg@10", "beir_recall@10"), output_dir=tmp_path
        )
    message = str(caught.value)
    delta = (
        base.summary().set_index("score").loc["beir_ndcg@10", "mean"]
        - worse.summary().set_index("score").loc["beir_ndcg@10", "mean"]
    )
    assert "2 significant regression(s)" in message
    assert "sign-flip permutation test, Holm over the 1 check of each score" in message
    assert "beir_ndcg@10" in message and "beir_recall@10" in message
    assert "full_text_search" in message and f"{-delta:+.3f}" in message
    assert "REGRESSION" in message and "lost evidence" in message  # example cases
    page = caught.value.result.page
    assert f"comparison page: {page}" in message and page.is_file()
    failures = caught.value.result.failures
    assert set(failures["score"]) == {"beir_ndcg@10", "beir_recall@10"}
    assert (failures["p_holm"] < 0.05).all() and (failures["delta"] < -0.1).all()
    # a drop within max_drop is accepted on purpose
    assert assert_no_regression(worse, base, max_drop=0.5, output_dir=tmp_path).passed
    # the reverse direction is an improvement, never a regression
    assert assert_no_regression(base, worse, output_dir=tmp_path).passed


def test_small_random_perturbation_passes(base, tmp_path):
    noisy = gates.perturbed(base)
    result = assert_no_regression(noisy, base, output_dir=tmp_path)
    row = result.rows.iloc[0]
    assert row["delta"] != 0 and row["wins"] + row["losses"] == 25  # really perturbed
    assert row["p_holm"] > 0.05


def test_method_picks_the_null_distribution_and_is_reported(base, worse, tmp_path):
    auto = check_regression(worse, base, output_dir=tmp_path, write_page=False)
    forced = check_regression(
        worse, base, output_dir=tmp_path, write_page=False, method="asymptotic"
    )
    assert auto.rows.loc[0, "p_method"] in {"monte-carlo", "normal-tail"}  # 225 pairs: MC
    assert forced.rows.loc[0, "p_method"] == "asymptotic"
    assert forced.settings["method"] == "asymptotic" and auto.settings["method"] == "auto"
    assert auto.rows.loc[0, "delta"] == forced.rows.loc[0, "delta"]
    assert auto.passed is forced.passed is False  # a large drop either way
    with pytest.raises(ValueError, match="method"):
        check_regression(worse, base, output_dir=tmp_path, method="bayes")


@pytest.mark.parametrize("test", ["t-test", "wilcoxon"])
def test_gates_take_the_papers_tests_and_name_them(base, worse, test, tmp_path):
    from scipy import stats as sps

    scores = ("beir_ndcg@10", "beir_recall@10")
    with pytest.raises(RegressionError) as caught:
        assert_no_regression(worse, base, scores=scores, test=test, output_dir=tmp_path)
    result = caught.value.result
    assert result.settings["test"] == test and set(result.rows["test"]) == {test}
    name = {"t-test": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test"}[test]
    assert f"({name}, Holm over the 1 check of each score" in str(caught.value)
    assert f"{name}, Holm over the 1 check of each score" in result.to_markdown()

    # each row's p is scipy's on the paired per-case values
    def ndcg(report):
        long = report.frames().scores()
        picked = long[(long["score"] == "beir_ndcg@10") & (long["status"] == "scored")]
        return picked.set_index("case_id")["value"]

    paired = pd.concat({"old": ndcg(base), "new": ndcg(worse)}, axis=1).dropna()
    scipy_test = sps.ttest_rel if test == "t-test" else sps.wilcoxon
    scipy_p = scipy_test(paired["new"], paired["old"]).pvalue
    row = result.rows.set_index("score").loc["beir_ndcg@10"]
    assert row["p_value"] == pytest.approx(scipy_p, rel=1e-9)
    # one family over both scores doubles the smaller p (Holm over 2)
    every = check_regression(
        worse, base, scores=scores, test=test, family="all", output_dir=tmp_path, write_page=False
    )
    assert (every.rows["family_size"] == 2).all()
    assert f"{name}, Holm over 2 checks" in every.message()
    assert every.rows["p_holm"].min() == pytest.approx(min(2 * every.rows["p_value"].min(), 1))
    with pytest.raises(GateInputError, match="test must be one of permutation, t-test, wilcoxon"):
        check_regression(worse, base, test="anova", output_dir=tmp_path)
    with pytest.raises(GateInputError, match="family must be one of score, all"):
        check_regression(worse, base, family="none", output_dir=tmp_path)


def test_slices_join_the_holm_family(base, worse, tmp_path):
    half = {str(q): "first" if q <= 112 else "second" for q in range(1, 226)}
    result = check_regression(worse, base, by=half, output_dir=tmp_path)
    assert not result.passed and set(result.rows["slice"]) == {"first", "second"}
    message = result.message()
    assert "2 significant regression(s)" in message and "Holm over 2 checks" in message
    assert "examples (beir_ndcg@10 · full_text_search · first)" in message
    assert check_regression(base, base, by=half, output_dir=tmp_path).passed


def test_unusable_input_is_refused(base, tmp_path):
    other = base.model_copy(update={"benchmark": BenchmarkManifest(name="beir_scifact")})
    with pytest.raises(GateInputError, match="different benchmarks"):
        assert_no_regression(other, base, output_dir=tmp_path)
    with pytest.raises(GateInputError, match=r"no score 'ndcg@99' in the baseline report"):
        assert_no_regression(base, base, scores=["ndcg@99"], output_dir=tmp_path)
    with pytest.raises(GateInputError, match=r"no mode 'dense' in both reports"):
        assert_no_regression(base, base, modes=["dense"], output_dir=tmp_path)
    with pytest.raises(GateInputError, match="no report at"):
        assert_no_regression(tmp_path / "nope.json", base, output_dir=tmp_path)


def test_assert_scores_floors(base):
    assert assert_scores(base, {"beir_ndcg@10": ">= 0.33", "beir_recall@10": 0.3}).passed
    with pytest.raises(AssertionError, match=r"beir_ndcg@10\s+full_text_search\s+0.348.*FAIL"):
        assert_scores(base, {"beir_ndcg@10": "> 0.4"})
    with pytest.raises(GateInputError, match="cannot read the floor"):
        parse_floor("at least 0.3")
    assert parse_floor("<0.5") == ("<", 0.5) and parse_floor(".3") == (">=", 0.3)


def test_cli_gate_exit_codes_summary_and_junit(base, worse, tmp_path, capsys, monkeypatch):
    old, new = gates.save(base, tmp_path / "old.json"), gates.save(worse, tmp_path / "new.json")
    pages = ["--page-dir", str(tmp_path / "pages")]
    assert main(["gate", str(old), "--baseline", str(old), *pages]) == 0
    out = capsys.readouterr().out
    assert "### Regression gate: ✅ passed" in out and "| beir_ndcg@10 |" in out

    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    code = main(
        [
            "gate",
            str(new),
            "--baseline",
            str(old),
            "--score",
            "beir_ndcg@10",
            "--score",
            "beir_recall@10",
            "--max-drop",
            "0.01",
            "--alpha",
            "0.01",
            "--summary-md",
            str(summary),
            "--junit-xml",
            str(junit),
            *pages,
        ]
    )
    assert code == 1
    assert "❌ failed" in summary.read_text() and "REGRESSION" in summary.read_text()
    assert "REGRESSION" in capsys.readouterr().out
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("2", "2")
    assert "regression" in suite.find("testcase/failure").get("message")

    other = json.loads(old.read_text())
    other.pop("_sha256")  # edited on purpose, as its checksum error says
    other["benchmark"]["name"] = "beir_scifact"
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert main(["gate", str(tmp_path / "other.json"), "--baseline", str(old), *pages]) == 2
    err = capsys.readouterr().err
    assert "unusable input: different benchmarks" in err and "beir_scifact" in err
    assert main(["gate", str(old), "--baseline", str(old), "--score", "nope", *pages]) == 2
    assert "no score 'nope'" in capsys.readouterr().err
    written = sorted((tmp_path / "pages").iterdir())
    assert written  # the gates above wrote their pages; the ones below write none
    assert main(["gate", str(new), "--baseline", str(old), "--no-page", *pages]) == 2
    assert "--no-page writes no page" in capsys.readouterr().err
    no_page = ["--no-page"]
    monkeypatch.chdir(tmp_path)  # where a default heta-gates/ would go
    assert main(["gate", str(new), "--baseline", str(old), "--method", "asymptotic", *no_page]) == 1
    assert "Comparison page" not in capsys.readouterr().out
    with pytest.raises(SystemExit):  # argparse names the choices
        main(["gate", str(new), "--baseline", str(old), "--method", "bayes", *no_page])
    assert "invalid choice: 'bayes'" in capsys.readouterr().err
    for test in ("t-test", "wilcoxon"):
        args = ["gate", str(new), "--baseline", str(old), "--test", test, "--family", "all"]
        assert main([*args, "--junit-xml", str(junit), *no_page]) == 1
        assert "Holm over 1 check" in capsys.readouterr().out
    assert main(["gate", str(old), "--baseline", str(old), "--test", "wilcoxon", *no_page]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["gate", str(new), "--baseline", str(old), "--test", "anova", *no_page])
    assert "invalid choice: 'anova'" in capsys.readouterr().err
    assert sorted((tmp_path / "pages").iterdir()) == written
    assert not (tmp_path / "heta-gates").exists()


def test_slim_report_keeps_scores_and_ids(base):
    slim = slim_report(base)
    assert slim.summary().equals(base.summary())
    first, orig = slim.case_results[0].response.results, base.case_results[0].response.results
    assert [r.id for r in first] == [r.id for r in orig] and not any(r.text for r in first)
    texts = sum(len(x.text) for r in base.case_results for x in r.response.results)
    assert texts and len(base.to_json()) - len(slim.to_json()) >= texts  # every text is gone
