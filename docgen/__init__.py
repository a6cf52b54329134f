"""App documents: format, loader, upstream import, compilation to stubs, symbols and prompts;
``tapir.docgen.build`` builds them from exploration traces (``tapir docgen``)."""
