//! Checks of rendered configs (`fatpaths_cfg/verify/`): readers of the routes and addresses in
//! rendered files (`route_lines`, `address_lines`, called by `verify/readers.py`), the route
//! check over what they read (`route_check`: `check_routes.py`, `check_backups.py`,
//! `context.py`) and the channel dependency graph behind the deadlock check (`deadlock`:
//! `verify/deadlock.py`, and compile's check of its layers in `api.py`).

pub mod address_lines;
pub mod deadlock;
pub mod route_check;
pub mod route_lines;
