"""`dockrecon identify resonance-coupling`: the shipped non-own resonance record in physical
coordinates, its modes file, the truth within the reported intervals, bad modes files."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from recon.app.cli import cli
from telemetry_samples import sample_path

REC = sample_path("resonance", "coupling_l3.csv")
MODES = sample_path("resonance", "coupling_l3.modes.toml")


def run(tmp_path, *args, modes=MODES):
    out = tmp_path / "c.json"
    res = CliRunner().invoke(cli, ["identify", "resonance-coupling", str(REC), "--modes",
                                   str(modes), "--draws", "100", *args, "--output", str(out)])
    return res, out


def test_coupling_recovers_the_shipped_truth_within_its_intervals(tmp_path):
    res, out = run(tmp_path)
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    truth = json.loads(sample_path("resonance", "coupling_l3.truth.json").read_text())
    for name, value in truth["parameters"].items():
        c = d["parameters"][name]
        assert {"map", "median", "ci68", "ci95", "unit", "prior", "stderr"} <= set(c)
        # measured: beta_3 200762 [199758, 201765] (true 2e5), beta_5 -1.151e8
        # [-1.393e8, -0.909e8] (true -1e8): the first approximation's error grows with
        # amplitude and the interval carries it (coupling.identify_coupling)
        assert c["ci95"][0] <= value <= c["ci95"][1], (name, c)
    # the leading coefficient is accurate in itself: within 1 %
    assert abs(d["parameters"]["beta_3"]["map"] / 2e5 - 1) < 0.01
    assert d["settings"]["frequency_source"].endswith("coupling_l3.modes.toml")
    x = np.array(d["coupling"]["x"])
    assert x[0] == 0 and len(d["harmonic"]["b_p"]) == len(d["harmonic"]["f_spl"])


@pytest.mark.parametrize(("edit", "key"), [
    (("p = 0", "p = 1"), "'s'"),
    (("order = 3", "order = 4"), "'order'"),
    (("mass = 1.5", "mass = -1.5"), "'mode_s.mass'"),
    (("modal_matrix = [[1.0, 0.8], [0.5, -1.5]]", "modal_matrix = [[1.0, 2.0], [0.5, 1.0]]"),
     "'modal_matrix'"),
    (("s = 1", "s = 1\nextra = 2"), "'extra'"),
])
def test_bad_modes_file_is_one_line_naming_the_key_and_exit_2(tmp_path, edit, key):
    bad = tmp_path / "m.toml"
    text = MODES.read_text()
    assert edit[0] in text
    bad.write_text(text.replace(edit[0], edit[1], 1))
    res, out = run(tmp_path, modes=bad)
    assert res.exit_code == 2, res.output
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and key in err[0] and "m.toml" in err[0]
    assert not out.exists()


def test_powers_outside_the_visible_set_are_refused(tmp_path):
    res, _ = run(tmp_path, "--powers", "1,3")
    assert res.exit_code == 2 and "x^1 gives nothing at the harmonic l = 3" in res.stderr


def test_chebyshev_power_coefficients_of_the_power_fit():
    """The basis of the power fit: z^n -> c_{n,l} b^n (digest B.8 values)."""
    from identification.resonance.analytic import chebyshev_coefficient as c

    assert (c(2, 2), c(4, 2), c(3, 3), c(5, 3), c(7, 3)) == (0.5, 0.5, 0.25, 5 / 16, 21 / 64)
    assert c(1, 3) == 0.0 and c(4, 3) == 0.0


def test_coupling_record_regenerates_from_the_script():
    from recon.io import read_table
    from telemetry_samples.resonance import generate as G

    t, q, f = G.coupling_record()
    fr, _ = read_table(REC, {"t": "s", "q1": "m", "q2": "m", "force": "N"})
    np.testing.assert_allclose(fr.q1.to_numpy(), q[:, 0], rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(fr.q2.to_numpy(), q[:, 1], rtol=1e-8, atol=1e-14)


def test_report_has_the_coefficients_and_the_truth(tmp_path):
    from reports.builders.resonance_coupling import build_coupling_report
    from reports.document import Table

    res, out = run(tmp_path)
    assert res.exit_code == 0
    assert (tmp_path / "c.pdf").read_bytes()[:5] == b"%PDF-"
    data = json.loads(out.read_text())
    assert data["kind"] == "resonance_coupling"
    rep = build_coupling_report(data, out)
    table = next(b for b in rep.sections[0].blocks if isinstance(b, Table))
    assert [r[0] for r in table.rows] == ["beta_3", "beta_5"]
    assert table.rows[0][5] == "2e+05"  # the truth column from coupling_l3.truth.json
    assert [f.name for f in rep.figures()] == ["coupling"]
