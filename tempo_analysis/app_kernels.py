"""The kernel manager that ``make app`` gives Voila: jupyter-server's own, with every kernel's
message streams on the server's event loop.

jupyter-server's ``MappingKernelManager`` starts each kernel through a synchronous
``IOLoopKernelManager``, whose start runs on a helper thread with an event loop of its own. The
kernel manager's ``loop`` is read there first, so it becomes that helper loop, and the ZMQ streams
that forward the kernel's messages to the browser's websocket run their callbacks on the helper
thread, while the server's thread writes to the same websocket (pings, replies). Two threads then
write into one tornado stream, and its write buffer breaks (``assert 0 < size <= self._size`` in
tornado's iostream): the socket drops every later message and the dashboard stops redrawing.

``MainLoopMappingKernelManager`` sets each new kernel manager's ``loop`` to the loop that runs the
server, before the kernel starts, so that every stream callback runs on the server's thread.
Voila's default kernel manager (an asynchronous one) has no helper thread but can stall a page
(voila-dashboards/voila#1428), which is why the app does not use it.

Use it with::

    voila notebooks/ --VoilaConfiguration.multi_kernel_manager_class=tempo_analysis.app_kernels.MainLoopMappingKernelManager
"""
from __future__ import annotations

from jupyter_server.services.kernels.kernelmanager import MappingKernelManager
from tornado.ioloop import IOLoop

__all__ = ["MainLoopMappingKernelManager"]


class MainLoopMappingKernelManager(MappingKernelManager):
    """jupyter-server's ``MappingKernelManager`` whose kernels' streams run on the server's loop."""

    def _create_kernel_manager_factory(self):
        create = super()._create_kernel_manager_factory()

        def create_on_this_loop(*args, **kwargs):
            km = create(*args, **kwargs)
            # called from the server's coroutine that starts the kernel: the current loop is the server's
            km.loop = IOLoop.current()
            return km

        return create_on_this_loop
