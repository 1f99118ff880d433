#!/usr/bin/python3
"""Validates rendered Kubernetes manifests offline, without a cluster.

Schema: every field of every object is checked against the Kubernetes API models that Debian's
python3-kubernetes generates from the API's OpenAPI spec (unknown fields, wrong types, missing
required fields), as the API server's strict decoding would. Policy: what Sift's deployment
promises (spot placement, a grace period that covers the worker's checkpoint, the coordinator's
per-role credentials and the workers' worker token from Secret files and never on a command line,
TLS files mounted, resource requests, a GPU per GPU worker).

  k8s_validate.py RENDERED.yaml {cpu|gpu|cpu-tls}      exit 0 valid, 1 with every problem listed
"""
import re
import sys

import kubernetes.client as k8s
import yaml

PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object}
problems = []


def model_for(api_version, kind):
    version = api_version.split("/")[-1]
    return getattr(k8s, version.capitalize() + kind, None)


def check(value, type_name, path):
    """Recursively checks `value` against a python-kubernetes type name ('V1PodSpec',
    'list[V1Container]', 'dict(str, str)', 'int', ...)."""
    if type_name.startswith("list["):
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list, got {type(value).__name__}")
            return
        for i, item in enumerate(value):
            check(item, type_name[5:-1], f"{path}[{i}]")
        return
    if type_name.startswith("dict("):
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a map, got {type(value).__name__}")
            return
        inner = re.match(r"dict\(([^,]*), (.*)\)", type_name).group(2)
        quantities = path.endswith(("limits", "requests"))
        for k, v in value.items():
            # Resource quantities may be written as numbers (nvidia.com/gpu: 1).
            if quantities and isinstance(v, (int, float)) and not isinstance(v, bool):
                continue
            check(v, inner, f"{path}.{k}")
        return
    if type_name in PRIMITIVES:
        if type_name == "int" and isinstance(value, bool):
            problems.append(f"{path}: expected int, got bool")
        elif not isinstance(value, PRIMITIVES[type_name]):
            problems.append(f"{path}: expected {type_name}, got {type(value).__name__} {value!r}")
        return
    model = getattr(k8s, type_name, None)
    if model is None:
        problems.append(f"{path}: no model {type_name} to check against")
        return
    if not isinstance(value, dict):
        problems.append(f"{path}: expected a {type_name} object, got {type(value).__name__}")
        return
    by_json = {j: p for p, j in model.attribute_map.items()}
    for key, v in value.items():
        if key not in by_json:
            problems.append(f"{path}: unknown field '{key}' in {type_name}")
            continue
        check(v, model.openapi_types[by_json[key]], f"{path}.{key}")


def check_required(doc, model, where):
    # The generated models raise ValueError for a missing required field on construction.
    try:
        k8s.ApiClient()._ApiClient__deserialize(doc, model.__name__)
    except (ValueError, TypeError) as e:
        problems.append(f"{where}: {e}")


def arg_after(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


def check_policy(objects, variant):
    def need(cond, what):
        if not cond:
            problems.append(f"policy ({variant}): {what}")

    by_kind = {}
    for o in objects:
        by_kind.setdefault(o["kind"], {})[o["metadata"]["name"]] = o
    coord = by_kind.get("Deployment", {}).get("sift-coordinator")
    worker = by_kind.get("Deployment", {}).get("sift-worker")
    service = by_kind.get("Service", {}).get("sift-coordinator")
    need(coord and worker and service, "a sift-coordinator Deployment and Service and a sift-worker Deployment")
    need("sift-data" in by_kind.get("PersistentVolumeClaim", {}), "a sift-data PersistentVolumeClaim")
    if not (coord and worker and service):
        return
    for o in objects:
        need(o["metadata"].get("namespace"), f"{o['kind']}/{o['metadata']['name']} has a namespace")

    # Coordinator: one replica, replaced (not rolled) so two never share the database; database on the PVC.
    need(coord["spec"].get("replicas") == 1, "one coordinator replica")
    need(coord["spec"].get("strategy", {}).get("type") == "Recreate", "the coordinator is replaced, not rolled")
    cpod = coord["spec"]["template"]["spec"]
    cc = cpod["containers"][0]
    db = arg_after(cc.get("args", []), "--db") or ""
    claim_vols = {v["name"] for v in cpod.get("volumes", []) if "persistentVolumeClaim" in v}
    need(any(m["name"] in claim_vols and db.startswith(m["mountPath"] + "/") for m in cc.get("volumeMounts", [])),
         f"the database {db} lives on the PersistentVolumeClaim")
    labels = coord["spec"]["template"]["metadata"]["labels"]
    need(all(labels.get(k) == v for k, v in service["spec"]["selector"].items()), "the Service selects the coordinator")

    # Workers: on spot nodes, told so, with a grace period that covers the checkpoint.
    wpod = worker["spec"]["template"]["spec"]
    wc = wpod["containers"][0]
    args = wc.get("args", [])
    port = service["spec"]["ports"][0]["port"]
    need(arg_after(args, "--coordinator") == f"{service['metadata']['name']}:{port}", "workers dial the Service")
    need(arg_after(args, "--market") == "spot", "workers say --market spot")
    terms = wpod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    spot_keys = {e["key"] for t in terms for e in t["matchExpressions"] if e["operator"] == "In"}
    tol_keys = {t["key"] for t in wpod.get("tolerations", [])}
    need(spot_keys and spot_keys <= tol_keys, "every spot pool the workers require is tolerated")
    grace = float(arg_after(args, "--grace-seconds") or 25)  # the worker's default
    need(wpod.get("terminationGracePeriodSeconds", 30) > grace,
         f"terminationGracePeriodSeconds exceeds the worker's {grace:g} s checkpoint grace")
    requests = wc.get("resources", {}).get("requests", {})
    need("cpu" in requests and "memory" in requests, "workers request CPU and memory")
    gpus = int(requests.get("nvidia.com/gpu", 0))
    if variant.startswith("gpu"):
        need(gpus >= 1 and wc["resources"].get("limits", {}).get("nvidia.com/gpu") == requests["nvidia.com/gpu"],
             "GPU workers request and limit nvidia.com/gpu")
        need(arg_after(args, "--device") == "cuda" or {"name": "SIFT_DEVICE", "value": "cuda"} in wc.get("env", []),
             "GPU workers train on cuda")
    else:
        need(gpus == 0, "CPU workers ask for no GPU")

    # Credentials (docs/security.md): the coordinator reads one token per role from a file of a
    # mounted Secret (--credentials-file); a worker reads only a worker token from a Secret file
    # (SIFT_TOKEN_FILE, which sift-entrypoint exports as SIFT_TOKEN, or --token-file), not the
    # coordinator's credentials. No token value on a command line or as a literal in the manifest.
    def mounted_from(pod, c, path, kinds):
        vols = {v["name"]: v for v in pod.get("volumes", []) if any(k in v for k in kinds)}
        for m in c.get("volumeMounts", []):
            if m["name"] in vols and path.startswith(m["mountPath"].rstrip("/") + "/"):
                return vols[m["name"]]
        return None

    def secret_name(vol):
        return (vol or {}).get("secret", {}).get("secretName")

    for c in (cc, wc):
        words = c.get("command", []) + c.get("args", [])
        need(not any(w == "--token" or w.startswith("--token=") for w in words),
             f"{c['name']}: no --token on argv (its value would show in ps)")
        for e in c.get("env", []):
            if e["name"] in ("SIFT_TOKEN", "SIFT_WORKER_TOKEN", "SIFT_USER_TOKEN", "SIFT_VIEWER_TOKEN"):
                need("value" not in e, f"{c['name']}: no {e['name']} literal in the manifest")
    cenv = {e["name"]: e for e in cc.get("env", [])}
    need("SIFT_TOKEN" not in cenv and "SIFT_TOKEN_FILE" not in cenv,
         "coordinator: no SIFT_TOKEN/SIFT_TOKEN_FILE (it takes --credentials-file; SIFT_TOKEN alone stops it)")
    cred = arg_after(cc.get("args", []), "--credentials-file") or ""
    cred_secret = secret_name(mounted_from(cpod, cc, cred, ["secret"]))
    need(cred_secret, f"coordinator: --credentials-file {cred!r} is a file of a mounted Secret")
    wenv = {e["name"]: e for e in wc.get("env", [])}
    token = arg_after(args, "--token-file") or wenv.get("SIFT_TOKEN_FILE", {}).get("value", "")
    token_secret = secret_name(mounted_from(wpod, wc, token, ["secret"]))
    need(token_secret, f"worker: its token file {token!r} (--token-file or SIFT_TOKEN_FILE) is a file of a mounted Secret")
    need(not token_secret or token_secret != cred_secret,
         f"worker: its token comes from a Secret of its own, not the coordinator's credentials ({cred_secret})")
    need(not cred_secret or not any(secret_name(v) == cred_secret for v in wpod.get("volumes", [])),
         f"worker: does not mount the coordinator's credentials Secret {cred_secret}")

    # A non-root container reads a Secret's files only if they are its group's (fsGroup; the
    # kubelet then adds group read) or everyone's (defaultMode): 0400 alone is root's.
    for pod, c in ((cpod, cc), (wpod, wc)):
        sc = pod.get("securityContext", {})
        if sc.get("runAsUser", 0) == 0 or "fsGroup" in sc:
            continue
        for v in pod.get("volumes", []):
            mode = v.get("secret", {}).get("defaultMode", 0o644)
            need("secret" not in v or mode & 0o004, f"{c['name']}: Secret volume {v['name']} (mode {mode:o}) is readable by uid {sc['runAsUser']} (set fsGroup)")

    # TLS (optional; the -tls variants require it): every certificate and key is a mounted file,
    # keys from Secrets, and workers check the coordinator's certificate when it serves one.
    for pod, c in ((cpod, cc), (wpod, wc)):
        for flag in ("--tls-cert", "--tls-key", "--tls-ca", "--tls-client-ca"):
            f = arg_after(c.get("args", []), flag)
            if f is None:
                continue
            kinds = ["secret"] if flag == "--tls-key" else ["secret", "configMap"]
            need(mounted_from(pod, c, f, kinds), f"{c['name']}: {flag} {f!r} is a file of a mounted {' or '.join(kinds)}")
    ctls = arg_after(cc.get("args", []), "--tls-cert") is not None
    need(ctls == (arg_after(cc.get("args", []), "--tls-key") is not None), "coordinator: --tls-cert and --tls-key together")
    need(ctls == (arg_after(args, "--tls-ca") is not None),
         "workers pass --tls-ca exactly when the coordinator serves TLS")
    if variant.endswith("-tls"):
        need(ctls, "the coordinator serves TLS")


def main():
    path, variant = sys.argv[1], sys.argv[2]
    objects = [d for d in yaml.safe_load_all(open(path)) if d]
    for i, doc in enumerate(objects):
        where = f"{doc.get('kind', '?')}/{doc.get('metadata', {}).get('name', '?')} (document {i + 1})"
        model = model_for(doc.get("apiVersion", ""), doc.get("kind", ""))
        if model is None:
            problems.append(f"{where}: no Kubernetes API model for {doc.get('apiVersion')} {doc.get('kind')}")
            continue
        check(doc, model.__name__, where)
        check_required(doc, model, where)
    if not problems:
        check_policy(objects, variant)
    for p in problems:
        print("INVALID:", p)
    if problems:
        return 1
    print(f"{variant}: {len(objects)} objects valid against the Kubernetes {k8s.__name__} models "
          f"(python3-kubernetes {__import__('kubernetes').__version__}) and Sift's deployment policy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
