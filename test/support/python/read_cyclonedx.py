"""Reads a CycloneDX 1.6 JSON document with cyclonedx-python-lib, as a consumer of our SBOMs would.

Validates it with the library's strict JSON validator (the official schema, through the jsonschema
package), deserializes it into the library's model, and prints what the model holds as JSON: the
components with their evidence (occurrences, call stack frames) and the vulnerabilities with what
they affect. Usage: python read_cyclonedx.py FILE
"""

import json
import sys

from cyclonedx.model.bom import Bom
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

text = open(sys.argv[1], encoding="utf-8").read()
error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
bom = Bom.from_json(json.loads(text))
components = []
for component in bom.components:
    evidence = component.evidence
    callstack = evidence.callstack if evidence else None
    components.append(
        {
            "purl": str(component.purl),
            "occurrences": sorted(
                f"{o.location} -> {o.symbol}" for o in (evidence.occurrences if evidence else [])
            ),
            "frames": [
                [f.package, f.module, f.function] for f in (callstack.frames if callstack else [])
            ],
        }
    )
vulnerabilities = [
    {"id": v.id, "affects": sorted(str(a.ref) for a in v.affects)} for v in bom.vulnerabilities
]
print(
    json.dumps(
        {
            "error": None if error is None else str(error),
            "components": sorted(components, key=lambda c: c["purl"]),
            "vulnerabilities": sorted(vulnerabilities, key=lambda v: v["id"]),
        }
    )
)
