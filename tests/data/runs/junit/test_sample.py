import time
import pytest


def test_passes():
    assert 1 + 1 == 2


def test_fails():
    assert "abc".upper() == "ABD", "upper case"


def test_slow():
    time.sleep(0.2)


@pytest.mark.skip(reason="needs a GPU")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    print("n is", n)
    assert n < 2


class TestGroup:
    def test_method(self):
        pass


@pytest.fixture
def broken():
    raise RuntimeError("fixture breaks")


def test_error(broken):
    pass
