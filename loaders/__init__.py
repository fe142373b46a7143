"""EarthVerse loaders: the data model, opening a release, event packages, reading package files and
downloading one event package from the Hub."""

from loaders.download import download_event_package
from loaders.models import Event, FileEntry, GroundTruth, HiddenTask, Rubric, RubricCriterion, Task
from loaders.package import EventPackage, PackagePathError
from loaders.readers import ReaderError, Reading, read_file, sniff_format
from loaders.release import Release, ReleaseError, open_ground_truth, open_release

__all__ = [
    "Event",
    "EventPackage",
    "FileEntry",
    "GroundTruth",
    "HiddenTask",
    "PackagePathError",
    "ReaderError",
    "Reading",
    "Release",
    "ReleaseError",
    "Rubric",
    "RubricCriterion",
    "Task",
    "download_event_package",
    "open_ground_truth",
    "open_release",
    "read_file",
    "sniff_format",
]
