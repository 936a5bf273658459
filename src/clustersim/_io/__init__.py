"""Private helpers of the readers and writers: text files, YAML/JSON documents, field checks, quantities, numbers.

Not part of the public API: names here may change without notice.
"""
