"""Change as a stage of its own: what going from one compiled fabric to another does.

`change` compares two compiled fabrics by names (switches, cables, layers, routes), `report`
lays the comparison out for review (terminal, markdown, JSON, JUnit).
"""
