"""Real database servers for the oracle tests: start/stop (``mariadb``), pytest fixtures
(``fixtures``), script replay and catalog reading (``catalog``), corpus replay
(``replay_corpora``)."""
