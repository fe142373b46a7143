from __future__ import annotations

import os
import shutil

from dataset.package_audit import audit_package
from loaders import layout


def _copy_package(built_release, tmp_path, event_id="CSX-001"):
    root = tmp_path / event_id
    shutil.copytree(layout.package_dir(built_release, event_id), root, symlinks=True)
    return root


def test_real_package_is_present_withheld_and_hash_audited(source_release, built_release):
    record = next(r for r in source_release.records if r.event_id == "CSX-063")
    audit = audit_package(layout.package_dir(built_release, "CSX-063"), "CSX-063", record.manifest())
    statuses = {file.status for file in audit.files}
    assert statuses == {"present", "withheld"}
    withheld = [file for file in audit.files if file.status == "withheld"]
    assert all("not included in the source release" in file.reason for file in withheld)
    assert audit.unlisted == []
    assert all(file.hash_match is not None for file in audit.files if file.status == "present")


def test_missing_unlisted_and_escaping_files_are_named(source_release, built_release, tmp_path):
    record = source_release.records[0]
    manifest = record.manifest()
    root = _copy_package(built_release, tmp_path)
    removed = next(entry for entry in manifest if entry.format == "json")
    (root / removed.relative_path).unlink()
    (root / "data" / "other" / "stray.json").write_text("{}")
    os.symlink("/etc/passwd", root / "data" / "other" / "link.txt")
    manifest.append(manifest[0].model_copy(update={"relative_path": "../../../etc/passwd"}))
    manifest.append(manifest[0].model_copy(update={"relative_path": "data/other/link.txt", "format": "text"}))
    audit = audit_package(root, record.event_id, manifest).by_path()
    assert audit[removed.relative_path].status == "missing"
    assert audit["../../../etc/passwd"].reason == "manifest path escapes the package"
    assert audit["data/other/link.txt"].reason == "file is a link that leaves the package"
    assert "data/other/stray.json" in audit_package(root, record.event_id, manifest).unlisted


def test_corrupt_file_is_unreadable(source_release, built_release, tmp_path):
    record = source_release.records[0]
    root = _copy_package(built_release, tmp_path)
    image = next(entry for entry in record.manifest() if entry.relative_path.endswith(".jpg"))
    (root / image.relative_path).write_bytes(b"\xff\xd8\xff\xe0 truncated")
    audit = audit_package(root, record.event_id, record.manifest()).by_path()
    assert audit[image.relative_path].status == "unreadable"
