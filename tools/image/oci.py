#!/usr/bin/env python3
"""Wrap a root filesystem tarball into an image archive that podman load,
docker load and ctr import all take: an OCI image layout (index.json,
blobs/sha256) with Docker's manifest.json beside it, one gzip layer.

  oci.py ROOT_TAR OUT_TAR NAME TAG [--cmd ARG]... [--label K=V]...
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
import time


def digest_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest(), os.path.getsize(path)


def add_bytes(tar, name, data, mtime):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mtime = mtime
    ti.mode = 0o644
    tar.addfile(ti, io.BytesIO(data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root_tar")
    ap.add_argument("out_tar")
    ap.add_argument("name")
    ap.add_argument("tag")
    ap.add_argument("--cmd", action="append", default=[])
    ap.add_argument("--label", action="append", default=[])
    a = ap.parse_args()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))

    work = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(a.out_tar)))
    try:
        layer = os.path.join(work, "layer.tar.gz")
        diff = hashlib.sha256()
        with open(a.root_tar, "rb") as src, open(layer, "wb") as raw:
            # mtime 0 in the gzip header: the same root gives the same layer
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    diff.update(chunk)
                    gz.write(chunk)
        layer_digest, layer_size = digest_file(layer)
        labels = dict(kv.split("=", 1) for kv in a.label)
        config = {
            "created": created,
            "architecture": "amd64",
            "os": "linux",
            "config": {
                "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                "Cmd": a.cmd or ["/usr/sbin/tidemarkctl", "--help"],
                "Labels": labels,
            },
            "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff.hexdigest()]},
            "history": [{"created": created, "created_by": "mmdebstrap (tools/image/build.sh)"}],
        }
        cfg = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
        cfg_digest = hashlib.sha256(cfg).hexdigest()
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": "sha256:" + cfg_digest, "size": len(cfg)},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                        "digest": "sha256:" + layer_digest, "size": layer_size}],
            "annotations": {"org.opencontainers.image.created": created},
        }
        man = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
        man_digest = hashlib.sha256(man).hexdigest()
        # docker.io/library/NAME:TAG is what an unqualified NAME:TAG (the
        # DaemonSet's image) resolves to in containerd and docker
        full = a.name if "/" in a.name else "docker.io/library/" + a.name
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [{
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": "sha256:" + man_digest, "size": len(man),
                "annotations": {"org.opencontainers.image.ref.name": a.tag,
                                "io.containerd.image.name": full + ":" + a.tag},
            }],
        }
        docker = [{"Config": "blobs/sha256/" + cfg_digest,
                   "RepoTags": [a.name + ":" + a.tag],
                   "Layers": ["blobs/sha256/" + layer_digest]}]
        tmp_out = a.out_tar + ".tmp"
        with tarfile.open(tmp_out, "w", format=tarfile.PAX_FORMAT) as t:
            add_bytes(t, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}', epoch)
            add_bytes(t, "index.json", json.dumps(index, sort_keys=True).encode(), epoch)
            add_bytes(t, "manifest.json", json.dumps(docker).encode(), epoch)
            add_bytes(t, "blobs/sha256/" + cfg_digest, cfg, epoch)
            add_bytes(t, "blobs/sha256/" + man_digest, man, epoch)
            ti = t.gettarinfo(layer, "blobs/sha256/" + layer_digest)
            ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname, ti.mode = epoch, 0, 0, "", "", 0o644
            with open(layer, "rb") as f:
                t.addfile(ti, f)
        os.replace(tmp_out, a.out_tar)
        print("%s:%s layer %s (%d bytes gzip, %d bytes root)" %
              (a.name, a.tag, layer_digest[:12], layer_size, os.path.getsize(a.root_tar)))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
