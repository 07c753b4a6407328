"""The decay pane (pane.py) and the helpers only it uses."""
