"""Declared schema of the campaign and fleet manifests (:mod:`models.schema`).

The readers, :func:`recon.app.campaign.load_manifest` and :func:`recon.app.fleet.load_fleet`,
take their key sets and the options' and ``[fleet]`` keys' ranges from these declarations;
:mod:`recon.schema` exports them as JSON Schemas (``campaign``, ``fleet``). They live in
``recon`` rather than beside the readers in ``recon.app`` because :mod:`recon.schema` may
not import the application layer.
"""
from __future__ import annotations

from models.schema import Key, Table, keys

__all__ = ["OPTIONS", "FLIGHT", "DEFAULTS", "GLOB", "CAMPAIGN", "FLEET_TABLE", "FLEET",
           "FLIGHT_KEYS"]

#: ``[defaults.options]`` or a flight's ``options``: the reconstruct options a manifest sets
#: (absent: the command's own defaults)
OPTIONS = Table("options", "Options of reconstruct for the flight (absent: the command's "
                "defaults).", keys("""
mcmc           | boolean/auto/always/never | - | - | - | posterior sampling: "auto",
| "always", "never" (recon.config.MCMC_MODES); true / false: "auto" / "never"
steps          | integer | - | - | [1, 10000000]   | MCMC steps per walker
walkers        | integer | - | - | [2, 100000]     | MCMC walkers
starts         | integer | - | - | [1, 10000]      | multistart local searches
max_nfev       | integer | - | - | [1, 1000000]    | model evaluations per local search
mcmc_below_ess | number  | - | - | [0, 1e9]~       | run MCMC when the importance sampler's
| effective sample size falls below this
"""), source=False)

_FLIGHT = keys("""
name      | string  | - | required | -            | the flight's result directory DIR/NAME
| (letters, digits, '-', '_', '.'; not starting with '.')
telemetry | files   | - | required | -            | the telemetry file, or a list of files on
| separate time bases (relative to the manifest)
scenario  | string  | - | required | -            | the scenario TOML (here or in [defaults])
config    | string  | - | -        | -            | the run configuration TOML (optional)
truth     | string  | - | -        | -            | the truth JSON {"parameters": {NAME: value}}
| (optional)
seed      | integer | - | 0        | [0, 2**63)   | the flight's seed (campaign --seed when
| neither the flight nor [defaults] gives one)
""")


def _entries(names: tuple[str, ...], required: tuple[str, ...] = (),
             inherit: bool = True) -> tuple[Key, ...]:
    """The flight keys ``names``, required as ``required`` says; ``inherit``: a missing one
    takes the value of ``[defaults]`` (no default of its own)."""
    out = []
    for k in _FLIGHT:
        if k.name in names:
            req = k.name in required
            out.append(Key(**{**k.__dict__, "default": "required" if req else
                              (None if k.required or inherit else k.default)}))
    return tuple(out)


#: a ``[[flight]]`` entry
FLIGHT = Table("flight", "One flight (an array of tables): its files and settings; any key "
               "of [defaults] it gives overrides the default.",
               _entries(("name", "telemetry", "scenario", "config", "truth", "seed"),
                        ("name", "telemetry")) + (OPTIONS,), source=False, array=True)

#: the keys of a flight, in the order the reader's message lists them
FLIGHT_KEYS = FLIGHT.order()

#: ``[defaults]``: the keys every flight shares
DEFAULTS = Table("defaults", "Settings every flight shares (a flight may override any).",
                 _entries(("scenario", "config", "seed"), inherit=False) + (OPTIONS,),
                 source=False)

#: a ``[[glob]]`` entry: one flight per matching file
GLOB = Table("glob", "One flight per file matching pattern (an array of tables), named by the "
             "file's stem, its truth STEM.truth.json beside it when present.",
             keys("""
pattern | string | - | required | - | file pattern, relative to the manifest
""") + _entries(("scenario", "config", "truth", "seed")) + (OPTIONS,), source=False,
             array=True)

#: a campaign manifest (``dockrecon campaign``)
CAMPAIGN = Table("campaign", "Campaign manifest (recon.app.campaign.load_manifest); paths "
                 "relative to the manifest's directory.", (DEFAULTS, FLIGHT, GLOB),
                 source=False)

#: ``[fleet]``: the shared parameters and the engine settings
#: (identification.engines.fleet.FleetSettings)
FLEET_TABLE = Table("fleet", "The parameters every flight shares and the settings of the "
                    "fleet fit (identification.engines.fleet.FleetSettings).", keys("""
shared        | strings | -  | required | -              | the shared parameters (scenario
| paths or parameter names), free in every flight, each once
shared_draws  | integer | - | 400    | [20, 100000]    | draws of the shared parameters per
| round
inner         | integer | - | 24     | [2, 10000]      | draws of each flight's own parameters
| per shared draw
rounds        | integer | - | 2      | [1, 20]         | rounds of the fit
df            | number  | - | 5.0    | [2.5, 1000]~    | degrees of freedom of the shared
| parameters' t proposal
inflate       | number  | - | 1.2    | [1, 10]~        | scale factor on its Gaussian spread
n_out         | integer | - | 2000   | [100, 1000000]  | equally weighted joint draws resampled
| from the last round
inner_df      | number  | - | 50.0   | [2.5, 1000]~    | degrees of freedom of the own
| parameters' t proposal
inner_inflate | number  | - | 1.0    | [1, 10]~        | scale factor on its Gaussian spread
"""), required=True, source=False)

#: a fleet manifest (``dockrecon fleet``): a campaign manifest with a ``[fleet]`` table
FLEET = CAMPAIGN.replace(name="fleet", help="Fleet manifest (recon.app.fleet.load_fleet): a "
                         "campaign manifest with a [fleet] table.", extra=(FLEET_TABLE,))
