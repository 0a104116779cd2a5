"""The PyTorch networks the benchmarks measure msrt against."""


def torch_lenet5():
    """LeNet-5 as msrt.examples.lenet builds it (convolutions without bias), in PyTorch."""
    import torch
    from torch import nn

    class LeNet5(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, bias=False)
            self.conv2 = nn.Conv2d(6, 16, 5, bias=False)
            self.pool = nn.MaxPool2d(2, 2)
            self.fc1 = nn.Linear(400, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.conv1(x)))
            x = self.pool(torch.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))

    return LeNet5()
