"""DEMO ground truth of CSX-999_Q1 (invented package); run from the package folder."""

import csv
import io
import json
from pathlib import Path

gauge = csv.DictReader(io.StringIO(Path("data/physical_hazard/demo_river_gauge.csv").read_text()))
rows = [row for row in gauge if "2031-04-09" <= row["date"] <= "2031-04-15"]
peak = max(rows, key=lambda row: float(row["discharge_m3s"]))
impacts = json.loads(Path("data/exposure_impact/demo_district_impacts.json").read_text())
flooded = sum(district["flooded_households"] for district in impacts["districts"])
result = {"peak_discharge_m3s": float(peak["discharge_m3s"]), "peak_date": peak["date"]}
print(json.dumps({**result, "total_flooded_households": flooded}))
