"""Readers: one per format, reader choice (explicit, content, extension), errors, and the real release."""

from __future__ import annotations

import io
import json
import os
import pickle
import time
import zipfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import rasterio
import xarray as xr
from PIL import Image
from pypdf import PdfWriter
from pypdf.generic import ContentStream, DictionaryObject, NameObject
from rasterio.transform import from_origin

from loaders.readers import (
    GENERIC_FORMATS,
    MANIFEST_FORMAT_READERS,
    ReaderError,
    Reading,
    read_file,
    reader_names,
    register,
    sniff_format,
    xml_reader,
    zip_reader,
)
from loaders.readers.registry import SAMPLE_BYTES

# ---------------------------------------------------------------- helpers that make files


def _write(path: Path, content: bytes | str) -> Path:
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def _pdf_bytes(pages: list[str]) -> bytes:
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    for text in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        content = ContentStream(None, writer)
        content.set_data(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode())
        page.replace_contents(content)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _png_bytes(image: Image.Image, format: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=format)
    return buffer.getvalue()


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _rgb_image() -> Image.Image:
    """4 x 2 px, all (10, 20, 30) except one (250, 0, 90) pixel."""
    image = Image.new("RGB", (4, 2), (10, 20, 30))
    image.putpixel((3, 1), (250, 0, 90))
    return image


def _geotiff(path: Path, *, size: int = 4, tiled: bool = False) -> Path:
    """A 2-band float32 GeoTIFF in EPSG:4326 with nodata -9999 in band 1's first pixel."""
    bands = np.arange(2 * size * size, dtype="float32").reshape(2, size, size)
    bands[0, 0, 0] = -9999
    profile = {
        "driver": "GTiff",
        "height": size,
        "width": size,
        "count": 2,
        "dtype": "float32",
        "crs": "EPSG:4326",
        "transform": from_origin(10.0, 50.0, 0.5, 0.5),
        "nodata": -9999,
    }
    if tiled:
        profile.update(tiled=True, blockxsize=256, blockysize=256)
    with rasterio.open(path, "w", **profile) as dataset:
        dataset.write(bands)
    return path


def _dataset() -> xr.Dataset:
    temperature = np.array([[[1.0, 2.0], [3.0, np.nan]], [[5.0, 6.0], [7.0, 8.0]]])
    return xr.Dataset(
        {"t2m": (("time", "lat", "lon"), temperature, {"units": "K"})},
        coords={"time": np.array(["2024-01-01", "2024-01-02"], dtype="datetime64[ns]"), "lat": [10.0, 11.0]},
        attrs={"title": "test grid", "version": np.int32(3)},
    )


# ---------------------------------------------------------------- JSON


def test_json_with_bom_parses_to_its_value(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.json", "\ufeff" + json.dumps({"name": "Boris", "rain_mm": [10, 20]}))
    reading = read_file(path)
    assert reading.format == "json"
    assert reading.structure == {"name": "Boris", "rain_mm": [10, 20]}
    assert reading.metadata["keys"] == ["name", "rain_mm"]
    assert reading.metadata["detected_by"] == "extension"
    assert reading.metadata["size_bytes"] == path.stat().st_size
    assert reading.text.startswith('{"name"')


def test_json_array_metadata(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "a.json", "[1, 2, 3]"))
    assert reading.metadata["top_level"] == "array"
    assert reading.metadata["length"] == 3


def test_corrupt_json_raises_reader_error_naming_file_and_format(tmp_path: Path) -> None:
    path = _write(tmp_path / "broken.json", '{"a": [1, 2')
    with pytest.raises(ReaderError) as caught:
        read_file(path)
    assert "broken.json" in str(caught.value)
    assert caught.value.format == "json"
    assert isinstance(caught.value, ValueError)
    assert str(tmp_path) not in str(caught.value)


# ---------------------------------------------------------------- HTML


HTML_PAGE = """<!DOCTYPE html><html><head><title>Storm  Boris &amp; floods</title>
<style>body { color: red; }</style><script>var hidden = "do not show";</script></head>
<body><h1>Flood report</h1><p>Rain reached <b>300 mm</b> in 4 days.</p>
<svg><title>icon label</title></svg>
<table><tr><th>Station</th><th><p>Rain</p></th></tr><tr><td>Jesenik</td><td>321</td></tr></table>
<pre>col_a  col_b
  1      2</pre><noscript>enable javascript</noscript></body></html>"""


def test_html_keeps_visible_text_and_title_and_drops_scripts(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "page.html", HTML_PAGE))
    assert reading.format == "html"
    assert reading.metadata["title"] == "Storm Boris & floods"
    assert "Rain reached 300 mm in 4 days." in reading.text
    assert "Flood report" in reading.text.splitlines()
    for hidden in ("do not show", "color: red", "enable javascript"):
        assert hidden not in reading.text


def test_html_table_rows_stay_on_one_line_and_pre_keeps_its_layout(tmp_path: Path) -> None:
    lines = read_file(_write(tmp_path / "page.html", HTML_PAGE)).text.splitlines()
    assert "Station\tRain" in lines
    assert "Jesenik\t321" in lines
    assert "col_a  col_b" in lines
    assert "  1      2" in lines


def test_an_empty_html_file_reads_as_empty_html(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "empty.html", b""))
    assert (reading.format, reading.text) == ("html", "")


# ---------------------------------------------------------------- XML


RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:gdacs="http://www.gdacs.org"><channel><title>GDACS</title>
<item><title>Green alert</title><gdacs:alertlevel>Green</gdacs:alertlevel></item>
<item><title>Red alert</title><gdacs:alertlevel>Red</gdacs:alertlevel></item></channel></rss>"""


def test_xml_structure_and_outline(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "feed.xml", RSS))
    assert reading.format == "xml"
    assert reading.metadata == {**reading.metadata, "root": "rss", "truncated": False}
    channel = reading.structure["children"][0]
    assert reading.structure["attributes"] == {"version": "2.0"}
    assert [child["tag"] for child in channel["children"]] == ["title", "item", "item"]
    assert channel["children"][2]["children"][1] == {
        "tag": "alertlevel",
        "attributes": {},
        "text": "Red",
        "children": [],
    }
    assert "      alertlevel: Red" in reading.text.splitlines()


def test_large_xml_structure_is_cut_and_flagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xml_reader, "MAX_NODES", 3)
    reading = read_file(_write(tmp_path / "feed.xml", RSS))
    assert reading.metadata["truncated"] is True
    assert len(reading.structure["children"][0]["children"]) == 1


def test_malformed_xml_raises_reader_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderError, match="as xml"):
        read_file(_write(tmp_path / "bad.xml", "<?xml version='1.0'?><a><b></a>"))


# ---------------------------------------------------------------- CSV and text


def test_csv_header_rows_and_count(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "stations.csv", "station,rain_mm\nJesenik,321\nOpava,180\n"))
    assert reading.format == "csv"
    assert reading.structure == {
        "columns": ["station", "rain_mm"],
        "rows": [["Jesenik", "321"], ["Opava", "180"]],
    }
    assert reading.metadata["row_count"] == 2
    assert reading.metadata["column_count"] == 2


def test_csv_semicolons_and_tsv_tabs(tmp_path: Path) -> None:
    semicolon = read_file(_write(tmp_path / "a.csv", "a;b\n1;2\n3;4\n"))
    assert semicolon.structure["columns"] == ["a", "b"]
    assert semicolon.metadata["delimiter"] == ";"
    tabbed = read_file(_write(tmp_path / "a.tsv", "a\tb\n1\t2\n"))
    assert tabbed.structure == {"columns": ["a", "b"], "rows": [["1", "2"]]}


def test_text_in_utf8_and_in_windows_1252(tmp_path: Path) -> None:
    utf8 = read_file(_write(tmp_path / "a.txt", "Niño 3.4\nline 2\n"))
    assert (utf8.format, utf8.text, utf8.metadata["encoding"]) == ("text", "Niño 3.4\nline 2\n", "utf-8")
    assert utf8.metadata["line_count"] == 2
    legacy = read_file(_write(tmp_path / "b.txt", "Niño".encode("cp1252")))
    assert (legacy.text, legacy.metadata["encoding"]) == ("Niño", "cp1252")


# ---------------------------------------------------------------- text encodings

# ASCII, Latin script with accents, and Cyrillic with its digits and spaces: what BOM-less UTF-16 finds.
NOTES = [
    "station,rain_mm\nJesenik,321\nOpava,180\n",
    "Épisode cévenol : 320 mm à Nîmes, Niño 3.4 = +1,2 °C\n",
    "Паводок 2012: Крымск, 7 июля, 300 мм за сутки.\n",
]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("text", NOTES, ids=["ascii", "latin", "cyrillic"])
def test_utf16_without_bom_reads_as_text_in_its_byte_order(tmp_path: Path, codec: str, text: str) -> None:
    reading = read_file(_write(tmp_path / "notes.dat", text.encode(codec)))
    assert (reading.format, reading.text, reading.metadata["encoding"]) == ("text", text, codec)
    assert reading.metadata["encoding_guessed"] is False


def test_a_utf16_csv_without_bom_parses_into_columns(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "stations.csv", NOTES[0].encode("utf-16-le")))
    assert reading.structure == {
        "columns": ["station", "rain_mm"],
        "rows": [["Jesenik", "321"], ["Opava", "180"]],
    }


def test_utf16_whose_sniffed_head_ends_mid_character_is_text(tmp_path: Path) -> None:
    # The emoji's surrogate pair straddles the end of the head the sniffers see.
    text = "a" * (SAMPLE_BYTES // 2 - 1) + "\U0001f327 rain\n"
    reading = read_file(_write(tmp_path / "log.dat", text.encode("utf-16-be")))
    assert (reading.format, reading.text, reading.metadata["encoding"]) == ("text", text, "utf-16-be")


@pytest.mark.parametrize(
    "content",
    [
        # Each of the first three passes the other tests of UTF-16 text, and fails one.
        np.arange(128, dtype="<u2").tobytes(),  # ASCII as UTF-16, but a fifth of it control characters
        np.arange(160, 400, dtype=">u2").tobytes(),  # letters as UTF-16, none of them ASCII
        np.tile(np.array([40, 72, 512, 1024], dtype="<u2"), 100).tobytes(),  # zero low bytes too
        _npy_bytes(np.arange(-500, 500, dtype="<i2")),
        np.linspace(0, 1, 500, dtype="<f4").tobytes(),
    ],
    ids=["counts", "letters", "flags", "npy", "float32"],
)
def test_binary_with_many_zero_bytes_stays_binary(tmp_path: Path, content: bytes) -> None:
    assert sniff_format(_write(tmp_path / "grid.dat", content)) == "binary"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("report.txt", "郑州暴雨：7月20日小时降雨量201.9毫米\n"),
        ("report.html", "<html><body><p>郑州暴雨</p></body></html>"),
        ("rain.csv", "站点,降雨量\n郑州,201.9\n"),
        ("event.json", '{"event": "郑州暴雨"}'),
    ],
)
def test_a_legacy_encoding_reads_as_a_flagged_guess_and_utf8_does_not(
    tmp_path: Path, name: str, text: str
) -> None:
    legacy = read_file(_write(tmp_path / f"gbk-{name}", text.encode("gbk")))
    assert (legacy.metadata["encoding"], legacy.metadata["encoding_guessed"]) == ("cp1252", True)
    assert "郑州" not in legacy.text  # mojibake, which the flag owns up to
    utf8 = read_file(_write(tmp_path / name, text))
    assert (utf8.metadata["encoding"], utf8.metadata["encoding_guessed"]) == ("utf-8", False)
    assert "郑州" in utf8.text


# ---------------------------------------------------------------- PDF


def test_pdf_page_count_and_text_per_page(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "report.pdf", _pdf_bytes(["Hello EarthVerse", "Second page"])))
    assert reading.format == "pdf"
    assert reading.metadata["page_count"] == 2
    assert reading.structure == {"pages": ["Hello EarthVerse", "Second page"]}
    assert reading.text == "[page 1]\nHello EarthVerse\n\n[page 2]\nSecond page"


def test_truncated_pdf_raises_reader_error_that_says_so(tmp_path: Path) -> None:
    data = _pdf_bytes(["Hello EarthVerse"])
    path = _write(tmp_path / "cut.pdf", data[: len(data) // 3])
    with pytest.raises(ReaderError, match=r"as pdf: .*no %%EOF marker"):
        read_file(path)


# ---------------------------------------------------------------- images


def test_png_size_mode_and_band_statistics(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "scene.png", _png_bytes(_rgb_image())))
    assert reading.format == "image"
    summary = reading.structure
    assert [summary[key] for key in ("width", "height", "mode", "image_format")] == [4, 2, "RGB", "PNG"]
    assert summary["bands"] == [
        {"band": "R", "min": 10.0, "max": 250.0, "mean": 40.0},
        {"band": "G", "min": 0.0, "max": 20.0, "mean": 17.5},
        {"band": "B", "min": 30.0, "max": 90.0, "mean": 37.5},
    ]
    assert reading.text.startswith("PNG image, 4 x 2 px, mode RGB")


def test_palette_images_are_summarised_by_colour(tmp_path: Path) -> None:
    palette = _rgb_image().convert("P", palette=Image.Palette.ADAPTIVE, colors=4)
    reading = read_file(_write(tmp_path / "scene.gif", _png_bytes(palette, "GIF")))
    assert reading.structure["mode"] == "P"
    assert [band["band"] for band in reading.structure["bands"]] == ["R", "G", "B"]
    assert reading.structure["bands"][0]["max"] == 250.0


def test_truncated_png_raises_reader_error(tmp_path: Path) -> None:
    data = _png_bytes(Image.effect_noise((64, 64), 50).convert("RGB"))
    with pytest.raises(ReaderError, match="as image"):
        read_file(_write(tmp_path / "cut.png", data[: len(data) // 2]))


def test_a_parser_error_quoting_the_path_names_only_the_file(tmp_path: Path) -> None:
    (tmp_path / "host-only-folder").mkdir()
    garbage = _write(tmp_path / "host-only-folder" / "fake.png", b"\x89PNG\r\n\x1a\n" + b"not an image" * 10)

    with pytest.raises(ReaderError) as error:
        read_file(garbage, "image")

    assert "fake.png" in str(error.value) and "host-only-folder" not in str(error.value)


# ---------------------------------------------------------------- ZIP


def _zip_bytes(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def test_zip_lists_entries_without_extracting(tmp_path: Path) -> None:
    path = _write(tmp_path / "bundle.zip", _zip_bytes({"a.tif": b"x" * 100, "docs/readme.txt": b"hello"}))
    reading = read_file(path)
    assert reading.format == "zip"
    entries = reading.structure["entries"]
    assert [(entry["name"], entry["size"]) for entry in entries] == [("a.tif", 100), ("docs/readme.txt", 5)]
    assert reading.structure["total_entries"] == 2
    assert reading.structure["total_uncompressed_bytes"] == 105
    assert sorted(os.listdir(tmp_path)) == ["bundle.zip"]


def test_zip_listing_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zip_reader, "MAX_LISTED", 2)
    path = _write(tmp_path / "many.zip", _zip_bytes({f"f{i}.txt": b"" for i in range(5)}))
    reading = read_file(path)
    assert len(reading.structure["entries"]) == 2
    assert reading.structure["total_entries"] == 5
    assert "3 more entries not listed" in reading.text


def test_zip_with_too_many_entries_is_counted_not_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zip_reader, "MAX_ENTRIES", 3)
    path = _write(tmp_path / "many.zip", _zip_bytes({f"f{i}.txt": b"" for i in range(5)}))
    reading = read_file(path)
    assert reading.structure == {"entries": [], "total_entries": 5, "total_uncompressed_bytes": None}


def test_corrupt_zip_raises_reader_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderError, match="as zip"):
        read_file(_write(tmp_path / "bad.zip", b"PK\x03\x04" + b"\x00" * 40))


# ---------------------------------------------------------------- NetCDF


def test_netcdf4_dims_variables_attrs_and_statistics(tmp_path: Path) -> None:
    pytest.importorskip("h5py", reason="h5netcdf needs h5py to read and write NetCDF-4")
    path = tmp_path / "grid.nc"
    _dataset().to_netcdf(path, engine="h5netcdf")
    reading = read_file(path)
    assert reading.format == "netcdf"
    summary = reading.structure
    assert summary["dims"] == {"time": 2, "lat": 2, "lon": 2}
    assert summary["attrs"] == {"title": "test grid", "version": 3}
    t2m = summary["variables"]["t2m"]
    assert (t2m["dims"], t2m["shape"], t2m["attrs"]) == (["time", "lat", "lon"], [2, 2, 2], {"units": "K"})
    assert t2m["stats"] == {"min": 1.0, "max": 8.0, "mean": 32.0 / 7, "valid_count": 7}
    assert summary["variables"]["time"]["stats"]["min"].startswith("2024-01-01")
    assert "t2m" in reading.text


def test_classic_netcdf_without_extension_is_sniffed(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    path = tmp_path / "grid.data"
    _dataset().to_netcdf(path, engine="scipy")
    assert path.read_bytes().startswith(b"CDF")
    reading = read_file(path)
    assert (reading.format, reading.metadata["detected_by"]) == ("netcdf", "content")
    assert reading.structure["variables"]["t2m"]["stats"]["max"] == 8.0


# ---------------------------------------------------------------- GeoTIFF


def test_geotiff_shape_crs_bounds_and_band_statistics(tmp_path: Path) -> None:
    reading = read_file(_geotiff(tmp_path / "dem.tif"))
    assert reading.format == "geotiff"
    summary = reading.structure
    assert (summary["band_count"], summary["height"], summary["width"]) == (2, 4, 4)
    assert summary["crs"] == "EPSG:4326"
    assert summary["bounds"] == [10.0, 48.0, 12.0, 50.0]
    assert summary["resolution"] == [0.5, -0.5]
    assert summary["nodata"] == -9999
    first, second = summary["bands"]
    assert (first["min"], first["max"], first["valid_count"]) == (1.0, 15.0, 15)
    assert (second["min"], second["max"], second["mean"], second["valid_count"]) == (16.0, 31.0, 23.5, 16)
    assert summary["unreadable_rows"] == []
    assert "CRS: EPSG:4326" in reading.text


def test_truncated_geotiff_keeps_its_header_and_names_the_lost_rows(tmp_path: Path) -> None:
    path = _geotiff(tmp_path / "big.tif", size=512, tiled=True)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.6)])
    reading = read_file(path)
    assert reading.structure["crs"] == "EPSG:4326"
    assert reading.structure["unreadable_rows"] == [[256, 512]]
    assert reading.structure["bands"][1]["pixels_read"] == 256 * 512
    assert "rows 256-511 unreadable" in reading.text


def test_a_tiff_named_zip_is_read_as_geotiff(tmp_path: Path) -> None:
    path = tmp_path / "precip.zip"
    _geotiff(tmp_path / "precip.tif").rename(path)
    reading = read_file(path)
    assert (reading.format, reading.metadata["detected_by"]) == ("geotiff", "content")


# ---------------------------------------------------------------- sniffing and reader choice


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"%PDF-1.7\n%\xe2\xe3", "pdf"),
        (b"PK\x03\x04\x14\x00", "zip"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "image"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image"),
        (b"GIF89a\x01\x00", "image"),
        (b"II*\x00\x08\x00\x00\x00", "geotiff"),
        (b"MM\x00*\x00\x00\x00\x08", "geotiff"),
        (b"\x89HDF\r\n\x1a\n\x00", "netcdf"),
        (b"CDF\x01\x00\x00", "netcdf"),
        (b"  <!DOCTYPE html><html><body>x</body></html>", "html"),
        (b"<script>var a = 1;</script>\n<!doctype html><html>", "html"),
        (b'<?xml version="1.0"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"></html>', "html"),
        (b'<?xml version="1.0"?><rss><channel/></rss>', "xml"),
        (b"<feed><entry>1</entry></feed>", "xml"),
        (b"<div><p>fragment</p></div>", "html"),
        (b'\xef\xbb\xbf{"a": 1}', "json"),
        (b'\n  [{"a": 1}]', "json"),
        (b"{{ template }}", "text"),
        (b"<no data>", "text"),
        (b"1950  -1.53  -1.34\n1951  -0.82\n", "text"),
        ("café".encode("cp1252"), "text"),
        (b"", "text"),
        (b"\x00\x01\x02\x03\xfe\xfd", "binary"),
    ],
)
def test_sniff_format_by_content(tmp_path: Path, content: bytes, expected: str) -> None:
    assert sniff_format(_write(tmp_path / "file.bin", content)) == expected


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("page.json", "<!DOCTYPE html><html><body>Not JSON</body></html>", "html"),
        ("feed.xml", '{"features": []}', "json"),
        ("error.txt", '{"status": 410}', "json"),
        ("page.txt", "<!doctype html><html><p>Page not found</p></html>", "html"),
        ("report.pdf", "Not found", "text"),
        ("refs.txt", "[1] first reference", "text"),
        ("feed.xml", "<no data>", "text"),
        ("archive.0", '{"events": [1, 2]}', "json"),
        ("index.php", "<html><head><title>t</title></head><body>b</body></html>", "html"),
        ("oni.data", " 1950  -1.53  -1.34\n", "text"),
    ],
)
def test_mislabelled_and_extensionless_files_read_by_content(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    reading = read_file(_write(tmp_path / name, content))
    assert reading.format == expected


def test_a_pdf_named_aspx_is_read_as_pdf(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "Drought.aspx", _pdf_bytes(["Drought in China"])))
    assert (reading.format, reading.structure) == ("pdf", {"pages": ["Drought in China"]})


def test_a_jpeg_named_bin_is_read_as_image(tmp_path: Path) -> None:
    reading = read_file(_write(tmp_path / "scene.bin", _png_bytes(_rgb_image(), "JPEG")))
    assert (reading.format, reading.structure["image_format"]) == ("image", "JPEG")


def test_unknown_binary_reads_as_size_and_hex_head(tmp_path: Path) -> None:
    content = bytes(range(256)) * 2
    reading = read_file(_write(tmp_path / "blob.bin", content))
    assert reading.format == "binary"
    assert reading.structure["size_bytes"] == 512
    assert reading.structure["hex_head"] == bytes(range(64)).hex(" ")
    assert "512 bytes" in reading.text


def test_binary_junk_with_a_text_extension_reads_as_binary(tmp_path: Path) -> None:
    assert read_file(_write(tmp_path / "a.jpg", b"\x00\x01\x02junk")).format == "binary"


def test_explicit_format_wins_and_is_strict(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.json", '{"a": 1}')
    reading = read_file(path, format="text")
    assert (reading.format, reading.metadata["detected_by"]) == ("text", "explicit")
    with pytest.raises(ReaderError, match="as xml"):
        read_file(path, format="xml")


def test_unknown_explicit_format_is_a_plain_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown reader format 'tiff'") as caught:
        read_file(_write(tmp_path / "a.json", "{}"), format="tiff")
    assert not isinstance(caught.value, ReaderError)


def test_missing_paths_and_folders_are_os_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_file(tmp_path / "missing.json")
    with pytest.raises(IsADirectoryError):
        read_file(tmp_path)


def test_when_every_candidate_fails_the_error_names_each(tmp_path: Path) -> None:
    with pytest.raises(ReaderError) as caught:
        read_file(_write(tmp_path / "a.xml", '{"a": '))
    assert caught.value.format == "json or xml"
    assert "json: " in caught.value.reason and "xml: " in caught.value.reason


def test_manifest_labels_map_to_registered_readers() -> None:
    labels = {"json", "html", "tiff", "image", "text", "xml", "archive", "pdf", "binary"}
    assert set(MANIFEST_FORMAT_READERS) == labels
    assert set(MANIFEST_FORMAT_READERS.values()) <= set(reader_names())
    assert set(GENERIC_FORMATS) <= set(reader_names())


def test_register_refuses_a_taken_name_or_extension() -> None:
    def read(path: Path) -> Reading:
        return Reading(format="dup", text="")

    with pytest.raises(ValueError, match="already registered"):
        register("json")(read)
    with pytest.raises(ValueError, match="already belong to 'json'"):
        register("new-format", extensions=(".JSON",))(read)
    assert "new-format" not in reader_names()


# ---------------------------------------------------------------- the real release

# What a manifest label may turn out to be: the label's own reader, or what its content really is.
ACCEPTED_FORMATS = {
    "json": {"json"},
    "html": {"html", "text", "json"},
    "xml": {"xml", "json", "html", "text"},
    "text": {"text", "json", "html", "xml", "csv"},
    "image": {"image"},
    "tiff": {"geotiff"},
    "archive": {"zip"},
    "pdf": {"pdf", "html", "text"},
    "binary": {"binary", "text", "html", "json", "xml"},
}


@pytest.fixture(scope="module")
def source_dir(source_release) -> Path:
    return source_release.root


def _manifest_labels(source: Path) -> dict[Path, str]:
    labels: dict[Path, str] = {}
    for record_path in sorted((source / "tasks").glob("*.json")):
        record = json.loads(record_path.read_text(encoding="utf-8"))
        for entry in record["event_files"]:
            labels[source / "packages" / record["event_id"] / entry["relative_path"]] = entry["format"]
    return labels


def _is_truncated_pdf(path: Path) -> bool:
    data = path.read_bytes()
    return b"%PDF-" in data[:1024] and b"%%EOF" not in data[-2048:]


def _read_outcome(path: Path) -> tuple[str | None, bool]:
    """The format `path` reads as (None when its reader refuses it) and whether its encoding was a guess;
    run in a worker process."""
    try:
        reading = read_file(path)
    except ReaderError:
        return None, False
    return reading.format, bool(reading.metadata.get("encoding_guessed"))


@pytest.mark.release
def test_every_file_of_the_release_reads_as_a_sensible_format(source_dir: Path) -> None:
    labels = _manifest_labels(source_dir)
    files = sorted(path for path in (source_dir / "packages").glob("*/data/**/*") if path.is_file())
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        outcomes = dict(zip(files, pool.map(_read_outcome, files, chunksize=64), strict=True))
    found: Counter[tuple[str, str]] = Counter()
    for path, (format_read, _) in outcomes.items():
        label = labels.get(path, "unlisted")
        found[label, str(format_read)] += 1
        accepted = ACCEPTED_FORMATS.get(label, set(reader_names()))
        sensible = format_read is None or format_read in accepted
        assert sensible, f"{path}: manifest {label}, read as {format_read}"
    elapsed = time.perf_counter() - started
    print(f"\nread {len(files)} files in {elapsed:.1f} s; (label, reading) counts: {sorted(found.items())}")
    unreadable = [path for path, (format_read, _) in outcomes.items() if format_read is None]
    guessed = [path.name for path, (_, guess) in outcomes.items() if guess]
    assert len(files) > 5000
    assert set(labels) >= set(files), "every package file has a manifest entry"
    # The only unreadable files are PDFs the source cut off mid-download (no %%EOF).
    assert [path for path in unreadable if not _is_truncated_pdf(path)] == []
    assert len(unreadable) <= 20
    # The one file in a legacy encoding: a NOAA page in Windows-1252 (the guess is right there).
    assert guessed == ["event_reports_001_NOAA_CPC_Special_Climate_Summary_97-2.html"]


def test_reader_error_survives_pickling(tmp_path: Path) -> None:
    error = ReaderError(tmp_path / "a.json", "json", "truncated")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.path, copy.format, copy.reason, str(copy)) == (error.path, "json", "truncated", str(error))
