import os
from collections import OrderedDict as OD
import json, sys


class Shape:
    """A shape with an area. More text here."""

    def __init__(self, name):
        self.name = name

    def area(self):
        raise NotImplementedError()


@decorated
class Square(Shape):
    def area(self):
        return self.side * self.side


def load_shapes(path):
    # not a docstring
    with open(path) as f:
        data = json.load(f)
    return [Square(d) for d in data]


def main():
    def helper():
        return os.getcwd()
    print(load_shapes(helper()))
