"""The names the ember-to-linalg lowering writes into a module for the runtime to read: the
error sites' declarations and attributes (read by backends/cpu/native_ir.py) and the
variables an entry writes back (read by the CPU and CUDA runtimes).

This module imports nothing, so code that only loads compiled objects (a call that finds its
code in the disk cache) does not import the lowering itself: `ember_to_linalg`'s package loads
every conversion and MLIR's linalg named-op DSL.
"""

ERROR_PREFIX = "ember_error_"
# attributes of a site's declaration (read by backends/cpu/native_ir.error_sites)
SITE_ATTRS = ("ember.error", "ember.op", "ember.message", "ember.where")
# and of a shape site's: the op's operand types and attributes (JSON), for `shape_error`
SHAPE_ATTRS = ("ember.types", "ember.attrs")
VALUED_ATTR = "ember.valued"  # the operands whose values it reports (`shape_check`)
# an entry's attribute: the indices of the variables it writes back, in order
VARIABLES_ATTR = "ember.variables"
