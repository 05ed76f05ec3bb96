"""The black-box scoring service: private test sets, API keys, limits, blind windows, leaderboard."""
