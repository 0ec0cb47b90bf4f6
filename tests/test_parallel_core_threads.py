"""lax/parallel_core.py's lowering state is per thread: while one thread lowers a program across
processes (psum as the core's all_reduce), another thread's psum lowers as usual."""
import threading

from xjax._src.lax import parallel_core


def test_lowering_across_is_per_thread():
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def lowering():
        with parallel_core.lowering_across("i"):
            seen["inside"] = parallel_core.can_lower({"axis_name": ("i",)})
            entered.set()
            checked.wait(10)
        seen["after"] = parallel_core.can_lower({"axis_name": ("i",)})

    def other():
        entered.wait(10)
        seen["other thread"] = parallel_core.can_lower({"axis_name": ("i",)})
        checked.set()

    threads = [threading.Thread(target=lowering), threading.Thread(target=other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen == {"inside": True, "other thread": False, "after": False}


def test_lowering_across_nests_and_restores():
    with parallel_core.lowering_across("i"):
        with parallel_core.lowering_across("j"):
            assert parallel_core.can_lower({"axis_name": ("j",)})
            assert not parallel_core.can_lower({"axis_name": ("i",)})
        assert parallel_core.can_lower({"axis_name": ("i",)})
    assert not parallel_core.can_lower({"axis_name": ("i",)})
