"""The inspector and the recorder (``tapir inspect``, ``tapir record``)."""
