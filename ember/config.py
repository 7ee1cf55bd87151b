"""`em.config`: process-wide settings (TensorFlow's tf.config names)."""

from ember.runtime.config import (executables_per_trace, functions_run_eagerly, get_fallback,
                                  run_functions_eagerly, set_compile_cache_limits,
                                  set_fallback, set_pass_verification, verify_passes)
from ember.runtime.config import get_tier, set_tier, set_tier_threshold, tier_threshold
from ember.runtime.devices import PhysicalDevice, list_physical_devices
from ember.runtime.logical_devices import (LogicalDevice, LogicalDeviceConfiguration,
                                           get_logical_device_configuration,
                                           list_logical_devices,
                                           set_logical_device_configuration)

__all__ = ["executables_per_trace", "functions_run_eagerly", "get_fallback",
           "run_functions_eagerly", "set_compile_cache_limits", "set_fallback",
           "set_pass_verification", "verify_passes", "PhysicalDevice",
           "list_physical_devices", "LogicalDevice", "LogicalDeviceConfiguration",
           "get_logical_device_configuration", "list_logical_devices",
           "set_logical_device_configuration", "get_tier", "set_tier", "set_tier_threshold",
           "tier_threshold"]
