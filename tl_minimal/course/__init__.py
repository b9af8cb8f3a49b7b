"""The lessons' helpers beside the pictures (``tl_minimal.views``) and the exercises' checkers: the
shipped checkpoints, notebook 02's pair toy, notebook 06a's forgetting and gradient reach, the gate-start
runs of 06a, 06b and 07, the fast forms' cost (01b, 03b), notebook 00's set-up checks. They import the
course library; the library never imports them."""
