"""tempo_analysis.app_kernels: the kernel manager of `make app` runs every kernel's message streams
on the server's event loop, so that the server's thread is the only one that writes to a
dashboard's websocket (jupyter-server's plain manager puts them on a helper thread's loop)."""
from __future__ import annotations

import asyncio


import pytest
from jupyter_server.services.kernels.kernelmanager import MappingKernelManager
from tornado.ioloop import IOLoop

from tempo_analysis.app_kernels import MainLoopMappingKernelManager

ROOT_MAKEFILE = __import__("pathlib").Path(__file__).resolve().parents[2] / "Makefile"


async def _loops(manager_class):
    """(the server's loop, the kernel manager's loop, the iopub stream's loop) for one real kernel."""
    manager = manager_class()
    kernel_id = await manager.start_kernel(kernel_name="python3")
    try:
        km = manager.get_kernel(kernel_id)
        stream = km.connect_iopub()
        try:
            return IOLoop.current(), km.loop, stream.io_loop
        finally:
            stream.close()
    finally:
        await manager.shutdown_kernel(kernel_id, now=True)


@pytest.mark.slow
def test_the_apps_kernel_streams_run_on_the_servers_loop():
    server, km_loop, stream_loop = asyncio.run(_loops(MainLoopMappingKernelManager))
    assert km_loop is server and stream_loop is server


@pytest.mark.slow
def test_jupyter_servers_plain_manager_puts_them_on_another_loop():
    """The cause the app's manager removes: if this starts to pass on the plain manager, upstream
    fixed it and the app's manager is no longer needed."""
    server, km_loop, stream_loop = asyncio.run(_loops(MappingKernelManager))
    assert stream_loop is not server


def test_make_app_serves_with_this_manager():
    line = next(l for l in ROOT_MAKEFILE.read_text().splitlines() if l.startswith("VOILA_KERNELS :="))
    assert line.endswith("multi_kernel_manager_class=tempo_analysis.app_kernels.MainLoopMappingKernelManager")
