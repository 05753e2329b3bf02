"""The machinery that knows no op (see ../../../shared/ARCHITECTURE.md): so far the backward walk."""
