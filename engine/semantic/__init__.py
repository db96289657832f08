"""The optional semantic second stage: chunk files, embed them, re-rank the lexical top files.

`chunks` cuts files, `embedder` runs the model (the `semantic` extra), `store` keeps vectors by
content, `vectors` embeds and looks up, `fuse` mixes similarity into a finished ranking.
Importing this package is cheap: numpy and the model's runtime load only in the functions.
"""
