//! Config rendering (`fatpaths_cfg/render/`): route lines laid out without a Python string per
//! route (`route_text`, called by `render/routes.py`).

pub mod route_text;
