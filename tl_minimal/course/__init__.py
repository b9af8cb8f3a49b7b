"""The course helpers beside the pictures (``tl_minimal.views``) and the exercises' checkers
(``tl_minimal.exercises``): the shipped checkpoints (``shipped``), the small trained models the
notebooks look inside; notebook 02's toy of pairs in both memories (``pair_toy``); what a
trained model's gates keep across a gap (``forgetting``, notebook 06a); how much of the loss's gradient
reaches the pairs before training (``gradient_reach``, 06a) and the gate-start and ladder runs
(``recall_start``, 06a, 06b, 07); what the fast forms cost, counted
term by term (``cost``, notebooks 01b and 03b); notebook 00's set-up checks
(``setup``: the device, the error for a missing one, smoke mode, the data folder). Helpers import the course
library; the library never imports them."""
