"""Runs INSIDE the Extra-P virtual environment (numpy < 2), never imported by the harness.

Reads one JSON request on stdin: {"file": Extra-P text file, "modelers": [names],
"points": [[values of parameter 1], [values of parameter 2], ...]} and prints one JSON
object: modeler name -> {"function": text, "values": [predictions]} or {"error": text}.
Every modeler fits the medians (Measure.MEDIAN); the harness exports one value per point,
so the measure does not matter anyway. Models are evaluated through Extra-P's Python API
(`model.hypothesis.function.evaluate`), since Extra-P has no prediction command.
"""
import json
import sys
import warnings

import numpy as np
from extrap.entities.measurement import Measure
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator


def predict(path: str, modeler: str, points: np.ndarray) -> dict:
    """Fit the file's only region with `modeler` and evaluate the model at `points`."""
    experiment = TextFileReader().read_experiment(path)
    generator = ModelGenerator(experiment, modeler=modeler, use_measure=Measure.MEDIAN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        generator.model_all()
    (model,) = generator.models.values()
    function = model.hypothesis.function
    values = function.evaluate(points[0] if len(points) == 1 else points)
    values = np.broadcast_to(np.asarray(values, dtype=float), points.shape[1:])
    text = function.to_string(*experiment.parameters).replace("\n", "; ")
    return {"function": text, "values": [float(v) for v in values]}


def main() -> None:
    request = json.load(sys.stdin)
    points = np.asarray(request["points"], dtype=float)
    result = {}
    for modeler in request["modelers"]:
        try:
            result[modeler] = predict(request["file"], modeler, points)
        except Exception as error:  # noqa: BLE001 - reported per modeler, in the table
            result[modeler] = {"error": f"{type(error).__name__}: {error}"}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
