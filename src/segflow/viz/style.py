"""The colours of a picture, shared by the DOT and HTML renderers: (fill, line) per node kind."""

__all__ = ["COLORS"]

COLORS = {
    "forward": ("#dbe9f6", "#3b75af"),     # ops of the forward computation: blue
    "backward": ("#fde2c8", "#d9741c"),    # ops the backward walk (gradients()) built: orange
    "scope": ("#e4efe1", "#5b8f4f"),       # a collapsed name scope (group_scopes): green
    "slices": ("#f6e0f0", "#a3358c"),      # an IndexedSlices (and edges carrying its parts): purple
}
