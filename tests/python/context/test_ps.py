"""set_ps_context / get_ps_context / reset_ps_context (spec §4, §5.9, §6)."""
import pytest

import msrt as ms
from ctxutil import assert_tokens, message, options, quiet_get, recorded_warnings, state

SET, GET, RESET = ms.set_ps_context, ms.get_ps_context, ms.reset_ps_context

CLUSTER_ENV = {
    "MS_ROLE": "MS_WORKER",
    "MS_WORKER_NUM": "4",
    "MS_SERVER_NUM": "2",
    "MS_SCHED_HOST": "10.0.0.1",
    "MS_SCHED_PORT": "8000",
    "MS_SCHED_MANAGE_PORT": "9000",
}


@pytest.fixture
def cluster_env(monkeypatch):
    for key, value in CLUSTER_ENV.items():
        monkeypatch.setenv(key, value)
    return monkeypatch


def test_defaults():
    expected = {
        "enable_ps": False,
        "ms_role": "MS_NOT_PS",
        "config_file_path": "",
        "worker_num": 0,
        "server_num": 0,
        "scheduler_ip": "0.0.0.0",
        "scheduler_port": 6667,
        "scheduler_manage_port": 11202,
        "server_mode": "",
        "enable_ssl": False,
        "client_password": "",
        "server_password": "",
    }
    assert {k: o["default"] for k, o in options("ps_context").items()} == expected
    for key, value in expected.items():
        assert GET(key) == value, key


def test_enable_ps_reads_the_cluster_from_the_environment(cluster_env):
    SET(enable_ps=True)
    assert GET("enable_ps") is True
    assert GET("ms_role") == "MS_WORKER"
    assert GET("worker_num") == 4
    assert GET("server_num") == 2
    assert GET("scheduler_ip") == "10.0.0.1"
    assert GET("scheduler_port") == 8000
    assert GET("scheduler_manage_port") == 9000
    assert GET("server_mode") == "PARAMETER_SERVER"


def test_environment_is_read_only_when_ps_is_enabled(cluster_env):
    SET(worker_num=1)
    assert GET("worker_num") == 1
    assert GET("ms_role") == "MS_NOT_PS"
    SET(enable_ps=False)
    assert GET("worker_num") == 1


def test_unset_counts_and_manage_port_become_zero(monkeypatch):
    SET(worker_num=3, server_num=3, scheduler_manage_port=12000, scheduler_ip="1.2.3.4", scheduler_port=7000)
    SET(enable_ps=True)
    assert (GET("worker_num"), GET("server_num"), GET("scheduler_manage_port")) == (0, 0, 0)
    # An unset scheduler address keeps the stored one.
    assert (GET("scheduler_ip"), GET("scheduler_port")) == ("1.2.3.4", 7000)
    assert GET("ms_role") == "MS_NOT_PS"  # no MS_ROLE and no ms_role: enabled without a role


def test_reset_only_clears_enable_and_roles(cluster_env):
    SET(enable_ps=True, config_file_path="/tmp/ps.json", enable_ssl=True, client_password="pw",
        server_password="spw")
    RESET()
    assert GET("enable_ps") is False
    assert GET("ms_role") == "MS_NOT_PS"
    assert GET("worker_num") == 4
    assert GET("server_num") == 2
    assert GET("scheduler_ip") == "10.0.0.1"
    assert GET("scheduler_port") == 8000
    assert GET("scheduler_manage_port") == 9000
    assert GET("server_mode") == "PARAMETER_SERVER"
    assert GET("config_file_path") == "/tmp/ps.json"
    assert GET("enable_ssl") is True
    assert GET("client_password") == "pw" and GET("server_password") == "spw"
    assert ms.context.snapshot()["ps_context"]["_role"] == ""


def test_enable_ps_false_clears_the_role(cluster_env):
    SET(enable_ps=True)
    SET(enable_ps=False)
    assert GET("ms_role") == "MS_NOT_PS"
    assert ms.context.snapshot()["ps_context"]["_role"] == ""


def test_ms_role_is_used_when_ms_role_env_is_unset():
    SET(ms_role="MS_SCHED")
    assert GET("ms_role") == "MS_NOT_PS"  # the role in force: none while PS is off
    SET(enable_ps=True)
    assert GET("ms_role") == "MS_SCHED"


def test_ms_role_in_the_same_call_as_enable_ps():
    SET(enable_ps=True, ms_role="MS_WORKER")
    assert GET("ms_role") == "MS_WORKER"


def test_ms_server_is_the_newer_name_of_ms_pserver(monkeypatch):
    monkeypatch.setenv("MS_ROLE", "MS_SERVER")
    SET(enable_ps=True)
    assert GET("ms_role") == "MS_PSERVER"


@pytest.mark.parametrize("role", ["MS_PSERVER", "MS_SERVER", "MS_SCHED"])
def test_server_and_scheduler_roles_move_off_ascend(role, monkeypatch):
    monkeypatch.setenv("MS_ROLE", role)
    ms.set_context(device_target="Ascend")
    SET(enable_ps=True)
    assert ms.get_context("device_target") == "CPU"
    ms.set_context(device_target="Ascend")
    assert ms.get_context("device_target") == "CPU"
    ms.set_context(device_target="GPU")
    assert ms.get_context("device_target") == "GPU"


def test_a_role_without_ps_mode_does_not_move_off_ascend():
    # Regression: ms_role alone (PS off) used to turn an Ascend request into CPU.
    SET(ms_role="MS_SCHED")
    ms.set_context(device_target="Ascend")
    assert ms.get_context("device_target") == "Ascend"
    SET(enable_ps=True)  # now a scheduler: retargeted at once (spec §5.9)
    assert ms.get_context("device_target") == "CPU"
    SET(enable_ps=False)
    ms.set_context(device_target="Ascend")
    assert ms.get_context("device_target") == "Ascend"


def test_worker_keeps_ascend(monkeypatch):
    monkeypatch.setenv("MS_ROLE", "MS_WORKER")
    ms.set_context(device_target="Ascend")
    SET(enable_ps=True)
    assert ms.get_context("device_target") == "Ascend"


def test_server_process_reads_stand_alone_and_no_full_batch(monkeypatch):
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    monkeypatch.setenv("MS_ROLE", "MS_PSERVER")
    SET(enable_ps=True)
    assert ms.get_auto_parallel_context("parallel_mode") == "stand_alone"
    assert ms.get_auto_parallel_context("full_batch") is False
    RESET()
    assert ms.get_auto_parallel_context("parallel_mode") == "semi_auto_parallel"
    assert ms.get_auto_parallel_context("full_batch") is True


@pytest.mark.parametrize(
    "var,text,tokens",
    [
        ("MS_ROLE", "MS_BAD", ["MS_ROLE", "'MS_BAD'", "MS_WORKER"]),
        ("MS_WORKER_NUM", "four", ["MS_WORKER_NUM", "'four'", "non-negative integer"]),
        ("MS_WORKER_NUM", "-1", ["MS_WORKER_NUM", "'-1'"]),
        ("MS_SERVER_NUM", "2x", ["MS_SERVER_NUM", "'2x'"]),
        ("MS_SCHED_PORT", "70000", ["MS_SCHED_PORT", "'70000'", "[0, 65535]"]),
        ("MS_SCHED_PORT", "80 80", ["MS_SCHED_PORT", "'80 80'"]),
        ("MS_SCHED_MANAGE_PORT", "65536", ["MS_SCHED_MANAGE_PORT", "'65536'", "[0, 65535]"]),
        ("MS_SCHED_HOST", "h" * 256, ["MS_SCHED_HOST", "255", "256"]),
    ],
)
def test_bad_environment_is_a_clear_error_and_changes_nothing(var, text, tokens, cluster_env):
    cluster_env.setenv(var, text)
    SET(worker_num=1)
    before = state()
    with pytest.raises(ValueError) as excinfo:
        SET(enable_ps=True, server_num=7)
    text_ = message(excinfo)
    assert text_.startswith("For 'context.set_ps_context', ")
    assert_tokens(text_, tokens)
    assert state() == before
    assert GET("enable_ps") is False and GET("worker_num") == 1 and GET("server_num") == 0


def test_passwords_are_length_limited_and_never_echoed():
    secret = "s3cr3t-" + "x" * 1017
    assert len(secret) == 1024
    with pytest.raises(RuntimeError) as excinfo:
        SET(client_password=secret)
    assert_tokens(message(excinfo), ["'client_password'", "less than 1024"])
    assert "s3cr3t" not in message(excinfo)
    with pytest.raises(TypeError) as excinfo:
        SET(server_password=12345)
    assert "12345" not in message(excinfo)
    SET(server_password="x" * 1023)
    assert GET("server_password") == "x" * 1023


def test_enable_ps_type_check():
    with pytest.raises(TypeError) as excinfo:
        SET(enable_ps=1)
    assert_tokens(message(excinfo), ["'enable_ps'", "bool", "int"])


@pytest.mark.parametrize(
    "key,value,error,tokens",
    [
        ("ms_role", "MS_MASTER", RuntimeError, ["'MS_MASTER'", "'MS_WORKER'", "'MS_SERVER'", "'MS_SCHED'"]),
        ("server_mode", "FEDERATED_LEARNING", RuntimeError, ["'PARAMETER_SERVER'"]),
        ("scheduler_port", 0, ValueError, ["[1, 65535]"]),
        ("scheduler_manage_port", 65536, ValueError, ["[1, 65535]"]),
        ("worker_num", -2, ValueError, ["-2"]),
        ("scheduler_ip", 127, TypeError, ["str", "int"]),
        ("enable_ssl", "yes", TypeError, ["bool", "str"]),
    ],
)
def test_ps_key_errors(key, value, error, tokens):
    before = state()
    with pytest.raises(error) as excinfo:
        SET(**{key: value, "config_file_path": "/tmp/x.json"})
    assert type(excinfo.value) is error
    text = message(excinfo)
    assert text.startswith("For 'context.set_ps_context', ")
    assert_tokens(text, [f"'{key}'", *tokens])
    assert state() == before


def test_unknown_keys_use_mindspore_wording():
    with pytest.raises(ValueError) as excinfo:
        SET(enable_pss=True)
    text = message(excinfo)
    assert text.startswith("Set PS context keyword enable_pss is not recognized!")
    assert "'enable_ps'" in text
    with pytest.raises(ValueError) as excinfo:
        GET("enable_pss")
    assert message(excinfo).startswith("Get PS context keyword enable_pss is not recognized!")
    with pytest.raises(ValueError):
        GET("_role")
    with pytest.raises(ValueError):
        SET(_role="MS_WORKER")


def test_ps_keys_are_not_runtime_keys():
    with pytest.raises(ValueError):
        ms.set_context(enable_ps=True)
    with pytest.raises(ValueError):
        ms.get_context("worker_num")
    assert quiet_get("ps_context", "enable_ps") is False


def test_explain_and_summary_show_ps_keys(cluster_env):
    with recorded_warnings():
        SET(enable_ps=True)
    explanation = ms.context.explain("worker_num")
    assert explanation["family"] == "ps_context"
    assert explanation["requested"] == 4
    assert "ps_context.enable_ps" in ms.context.summary()
