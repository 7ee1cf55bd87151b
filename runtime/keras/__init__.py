"""Keras's training API on ember: `Model` / `Sequential` with compile, fit, evaluate and
predict (model.py), their loops and inputs (fit.py), the compiled steps (compile.py) and the
strategy dispatch (dispatch.py). `em.keras` re-exports it."""
