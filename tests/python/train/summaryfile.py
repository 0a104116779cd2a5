"""Helpers shared by the summary file tests: the protobuf message class of a test descriptor, the single file
a summary directory holds."""
import os


def message_class(fdp, full_name):
    """The Google protobuf message class named `full_name` in the FileDescriptorProto `fdp`."""
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName(full_name)
    get = getattr(message_factory, "GetMessageClass", None)
    return get(desc) if get else message_factory.MessageFactory(pool).GetPrototype(desc)


def only_file(directory):
    names = os.listdir(directory)
    assert len(names) == 1, names
    return os.path.join(directory, names[0])
