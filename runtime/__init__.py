"""Devices, UI hierarchies, grounding, navigation and traces: where scripts meet screens."""
