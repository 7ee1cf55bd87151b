"""Training: `em.Module`, optimizers and their learning-rate schedules, layers, losses and
checkpoints (the Keras-shaped layer above the ops; `ember.optimizers`, `ember.layers`,
`ember.losses` and `ember.train` re-export it)."""
