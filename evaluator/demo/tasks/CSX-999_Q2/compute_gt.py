"""DEMO ground truth of CSX-999_Q2 (invented package); run from the package folder."""

import json
from pathlib import Path

districts = json.loads(Path("data/exposure_impact/demo_district_impacts.json").read_text())["districts"]
shares = {d["district"]: round(100 * d["flooded_households"] / d["households"], 1) for d in districts}
ranked = sorted(shares, key=shares.get, reverse=True)
print(json.dumps({"ranked_districts": ranked, "highest_share_percent": shares[ranked[0]]}))
