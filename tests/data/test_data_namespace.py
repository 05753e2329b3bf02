"""The sf.data faces: static modules whose names are the objects `segflow._data` defines."""
import importlib
import subprocess
import sys

import pytest

import segflow as sf
from segflow._data import dataset, iterator

FACES = ["data", "data.experimental", "compat.v1.data", "data.ops.dataset_ops", "data.ops.iterator_ops"]


@pytest.mark.parametrize("face", FACES)
def test_face_is_static_and_all_is_its_public_surface(face):
    m = importlib.import_module(f"segflow.{face}")
    assert sys.modules[f"segflow.{face}"] is m
    public = {n for n in vars(m) if not n.startswith("_")}
    assert public == set(m.__all__) and len(m.__all__) == len(set(m.__all__))


def test_names_are_the_private_objects():
    assert sf.data.Dataset is dataset.DatasetV2
    assert sf.compat.v1.data.Dataset is dataset.DatasetV1 and issubclass(dataset.DatasetV1, dataset.DatasetV2)
    assert sf.compat.v1.data.make_one_shot_iterator is iterator.make_one_shot_iterator
    assert sf.compat.v1.data.Iterator is iterator.Iterator
    assert sf.data.experimental is sf.compat.v1.data.experimental
    assert sf.compat.v1.data is not sf.data


def test_v1_transformations_keep_v1():
    ds = sf.compat.v1.data.Dataset.range(4).map(lambda x: x).batch(2)
    assert isinstance(ds, sf.compat.v1.data.Dataset) and hasattr(ds, "make_one_shot_iterator")
    assert type(sf.data.Dataset.range(3).batch(2)) is sf.data.Dataset


def test_from_imports_in_a_fresh_interpreter():
    code = ("from segflow.data import Dataset; from segflow.compat.v1.data import make_initializable_iterator; "
            "from segflow.data.experimental import AUTOTUNE; import segflow as sf; "
            "assert sf.data.Dataset is Dataset; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
