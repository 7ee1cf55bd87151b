"""tf.Transform for Ember (`em.transform`): a full-pass analysis of a dataset, then the
preprocessing function as an instance-level transform with the statistics as constants.

Modules: context.py (the analysis and transform contexts analyzers report to), analyzers.py
(the full-pass reductions), mappers.py (the instance-level functions over their results),
analyze.py (the analysis passes and the working_dir they write), output.py
(`TFTransformOutput` and its layer), artifact.py (reading and checking working_dir).
"""
