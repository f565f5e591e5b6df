"""Probe-cone docking kernel speed: the reference 20-s scenario on one core, the batch entry
point on two cores. Prints one JSON object (last line); ``make bench`` records it."""
import json

from models.probe_cone import load_preset
from models.probe_cone.benchmark import benchmark

if __name__ == "__main__":
    print(json.dumps(benchmark(load_preset("reference"))))
