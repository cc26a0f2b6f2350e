"""One data model for time, shared by all four methods.

- :class:`Timelines` — timestamped posts in streams, and their windows (stream classification).
- :class:`PeriodCorpus` and :class:`TargetUsage` — documents tagged with ordered periods, and
  target-word usages with character offsets (semantic change, future text).
- :class:`SocialCorpus` — documents by social units in time slices, with a graph over units
  (social diffusion).
- :func:`slice_times` — by year, month or custom bins.

Bad input raises :class:`DataError` (a ``ValueError``) naming the column, the rows or ids, and the fix.
"""

from .errors import DataError
from .periods import PeriodCorpus, TargetUsage, usages_frame
from .slicing import slice_times
from .social import SocialCorpus
from .timelines import Timelines, UnsortedTimestampsWarning, Windows

__all__ = ["DataError", "PeriodCorpus", "SocialCorpus", "TargetUsage", "Timelines", "UnsortedTimestampsWarning",
           "Windows", "slice_times", "usages_frame"]
