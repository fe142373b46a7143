"""The content hash a trace records as `package_sha256`: what exactly the agent ran on.

It is the sha256 of the package's file listing in `sha256sum` form: one `<sha256 of the file>  <path>`
line per file (data/ and metadata/, package-relative, sorted). It depends only on the files' bytes, so
a built folder, a public Hub folder and a downloaded archive of one package give the same value.
"""

from __future__ import annotations

import hashlib

from loaders.package import EventPackage


def package_sha256(package: EventPackage) -> str:
    """The sha256 (hex) over every file of `package`, as the module says."""
    digest = hashlib.sha256()
    for relative in package.list_files():
        file_digest = hashlib.sha256(package.read_bytes(relative)).hexdigest()
        digest.update(f"{file_digest}  {relative}\n".encode())
    return digest.hexdigest()
