//! Inventory loading (`fatpaths_cfg/inventory/`): the parser of plain block-style YAML that
//! large generated inventories use (`plain_yaml`, called by `inventory/yaml_events.py`).

pub mod plain_yaml;
