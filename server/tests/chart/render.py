"""Renders and lints winplace's Helm chart with real Helm (Helm v4's library, PyPI's helm-python-sdk).

Reads {"chart": DIR, "release": NAME, "namespace": NS, "cases": {CASE: VALUES}} as JSON on standard input and
prints {"helm": VERSION, "cases": {CASE: {"lint": REPORT, "manifests": {TEMPLATE: TEXT}} or {"error": TEXT}}}:
what `helm lint DIR -f VALUES` reports and what `helm template NAME DIR -n NS -f VALUES` renders, per case.
server/tests/chart.rs runs it with the interpreter `cargo xtask test` installs (.tools/python).
"""

import json
import sys

import helm_python as helm


def main() -> None:
    request = json.load(sys.stdin)
    helm.disable_logging()
    out = {"helm": helm.helm_sdk_version(), "cases": {}}
    with helm.Chart.load(request["chart"]) as chart:
        for case, values in request["cases"].items():
            try:
                chart.validate_schema(values)
                manifests = chart.render(
                    values,
                    name=request["release"],
                    namespace=request["namespace"],
                    is_install=True,
                )
                report = helm.lint(
                    request["chart"], values, strict=False, namespace=request["namespace"]
                )
                out["cases"][case] = {"lint": report, "manifests": manifests}
            except helm.HelmError as error:
                out["cases"][case] = {"error": str(error)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
