"""Batch scheduling policies over a queue of rigid jobs: fcfs, sjf, EASY and conservative backfilling."""
