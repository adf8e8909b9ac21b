"""Deploy stage: push compiled configs to devices through NAPALM."""
