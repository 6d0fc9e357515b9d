"""No asyncio.wait_for in the product's code.

On Python 3.11 (our floor) asyncio.wait_for returns the result of an inner wait that finished in
the same loop pass as a cancellation and drops the cancellation (CPython gh-86296, fixed in 3.12):
a broker's connection task cancelled at shutdown just after a leadership change woke its long-poll
fetch kept serving, and the broker hung after "controlled shutdown complete". asyncio.timeout()
does not lose cancellations; tests/unit/test_purgatory.py shows the case itself.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fauxka",)  # every package of the product lives under it


def test_the_product_waits_with_asyncio_timeout_not_wait_for():
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"\basyncio\.wait_for\(|^\s*from asyncio import .*\bwait_for\b", line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert offenders == [], f"asyncio.wait_for can lose a cancellation on 3.11; use asyncio.timeout(): {offenders}"
