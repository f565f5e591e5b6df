"""The Python API: ``from recon import reconstruct, load_result``, the one Result of a run and
of a directory read back, the CLI's included."""
import gc
import json

import pytest

from models.errors import InputError
from models.probe_cone import preset_path
from tests.recon._fast import FLIGHTS, fast_config


@pytest.fixture(scope="module")
def api_run(tmp_path_factory):
    from recon import reconstruct

    tmp = tmp_path_factory.mktemp("api")
    cfg = fast_config(tmp)
    res = reconstruct(FLIGHTS / "nominal.parquet", scenario=preset_path("reference"),
                      config=cfg, mcmc="never", seed=3)
    return res, cfg, tmp


def test_a_python_reconstruction_equals_the_cli_one_read_back(api_run, cli_run):
    """The same flight, configuration and seed through ``dockrecon reconstruct`` and through
    ``recon.reconstruct``: ``load_result`` of the CLI's directory equals the returned result
    (the status, every parameter's summary, loads, energy, warnings and seed), and its repr
    is the table ``dockrecon show`` prints."""
    from recon import Result, load_result
    from recon.app.summary import parameter_table

    res, cfg, tmp = api_run
    out = tmp / "cli"
    r = cli_run("reconstruct", FLIGHTS / "nominal.parquet", "--scenario",
                preset_path("reference"), "--config", cfg, "--output", out, "--mcmc", "never",
                "--seed", "3", "-q")
    assert r.exit_code == 0, r.output
    loaded = load_result(out)
    assert isinstance(loaded, Result) and isinstance(res, Result)
    assert loaded == res
    assert Result.load(res.directory) == res
    assert loaded.document["diagnostics"] != {}                  # read whole, not a summary
    text = repr(res)
    assert text.splitlines()[0] == f"Result({str(res.directory)!r})"
    assert text.endswith(parameter_table(res.document))
    assert "rel_vel_x" in text and "deg" in text                 # the run configuration's units
    assert res["rel_vel_x"]["unit"] == "m/s"
    with pytest.raises(KeyError, match="no parameter 'closing'"):
        res["closing"]
    # a different seed is a different result
    other = json.loads((out / "result.json").read_text())
    other["parameters"]["rel_vel_x"]["median"] += 1e-9
    assert Result(other, out) != res


def test_the_result_gives_its_posterior_and_report_and_cleans_up(api_run, tmp_path):
    """Without an output directory the files live in a temporary directory as long as the
    result; ``save`` keeps them; ``to_inference_data`` is the posterior file read into memory;
    ``write_report`` writes beside ``result.json``."""
    res, _, _ = api_run
    idata = res.to_inference_data()
    assert set(idata.posterior.data_vars) == set(
        n for n, p in res.parameters.items() if p["prior"]["kind"] != "fixed")
    saved = res.save(tmp_path / "kept")
    assert saved == res and (tmp_path / "kept" / "posterior.nc").is_file()
    paths = saved.write_report(formats=("html",))
    assert paths == [tmp_path / "kept" / "report.html"] and paths[0].stat().st_size > 0
    from recon import reconstruct

    temp = reconstruct(FLIGHTS / "nominal.parquet", scenario=preset_path("reference"),
                       config=res.document["settings"]["config"], mcmc="never", seed=3)
    where = temp.directory
    assert where.is_dir() and temp == res
    del temp
    gc.collect()
    assert not where.exists()


def test_bad_arguments_are_refused_before_anything_runs(tmp_path):
    from recon import load_result, reconstruct

    with pytest.raises(InputError, match="mcmc"):
        reconstruct(FLIGHTS / "nominal.parquet", scenario=preset_path("reference"),
                    mcmc="sometimes")
    with pytest.raises(InputError, match="no result.json"):
        load_result(tmp_path)


def test_priors_and_bounds_stated_as_lmfit_parameters(api_run):
    """``flight_parameters`` gives the run's parameter space as lmfit.Parameters; edited
    (bounds, a parameter fixed) and handed back as ``params``, they are the problem's space;
    a name the run does not fit is refused naming it. ``Result.params`` is the result in
    lmfit's terms: medians, standard deviations, prior bounds."""
    from recon import flight_parameters
    from recon.flight import flight_problem

    res, cfg, _ = api_run
    args = (FLIGHTS / "nominal.parquet", preset_path("reference"))
    p = flight_parameters(*args, config=cfg)
    assert p["rel_vel_x"].min == pytest.approx(0.05) and p["rel_vel_x"].max == pytest.approx(0.4)
    assert p["rel_vel_x"].user_data["unit"] == "m/s" and not p["rel_pos_x"].vary
    p["rel_vel_x"].set(min=0.1, max=0.3, value=0.2)
    p["rel_roll"].set(value=0.0, vary=False)
    space = flight_problem(*args, config=cfg, params=p).problem.space
    assert (space["rel_vel_x"].prior.lower, space["rel_vel_x"].prior.upper) == (0.1, 0.3)
    assert space["rel_roll"].fixed and space["rel_roll"].value == 0.0
    assert "rel_roll" not in space.free_names
    import lmfit

    bad = lmfit.Parameters()
    bad.add("closing_speed", value=0.2, min=0.0, max=1.0)
    with pytest.raises(InputError) as e:
        flight_problem(*args, config=cfg, params=bad)
    assert e.value.key == "params.closing_speed"
    rp = res.params
    assert rp["rel_vel_x"].value == res["rel_vel_x"]["median"]
    assert rp["rel_vel_x"].stderr == res["rel_vel_x"]["stderr"]
    assert rp["rel_vel_x"].min == pytest.approx(0.05) and not rp["rel_pos_x"].vary
