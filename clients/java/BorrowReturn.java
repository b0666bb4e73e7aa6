// BorrowReturn borrows one ad from adloaderd over gRPC and returns it: the JVM quickstart of the
// README ("From Java and Kotlin"), built with Debian 12's grpc-java and protobuf-java packages (no
// Maven or Gradle download) and run against the real daemon by `make test`
// (Tests/python/test_clients.py). Kotlin calls the same generated classes (java_package
// dev.adloader.v1, java_multiple_files).
//
// Usage: java -cp CLASSPATH BorrowReturn [HOST:PORT] [AD_UNIT] [--shown]
// Prints one JSON line (the proto3 JSON mapping of each answer) and exits 0, or the status and 1.
import dev.adloader.v1.BorrowRequest;
import dev.adloader.v1.BorrowResponse;
import dev.adloader.v1.BorrowOutcome;
import dev.adloader.v1.NativeAdLoaderGrpc;
import dev.adloader.v1.ReturnRequest;
import dev.adloader.v1.ReturnResponse;
import com.google.protobuf.util.JsonFormat;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.util.concurrent.TimeUnit;

public final class BorrowReturn {
    public static void main(String[] args) throws Exception {
        String endpoint = args.length > 0 ? args[0] : "127.0.0.1:7411";
        String adUnit = args.length > 1 ? args[1] : "feed-native";
        boolean shown = args.length > 2 && args[2].equals("--shown");
        int colon = endpoint.lastIndexOf(':');
        ManagedChannel channel = NettyChannelBuilder
            .forAddress(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1)))
            .usePlaintext().build();
        // The affinity key on every call, the Return included (behind nginx it picks the replica).
        Metadata metadata = new Metadata();
        metadata.put(Metadata.Key.of("x-adloader-affinity", Metadata.ASCII_STRING_MARSHALLER), adUnit);
        NativeAdLoaderGrpc.NativeAdLoaderBlockingStub stub = NativeAdLoaderGrpc.newBlockingStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(metadata));
        try {
            BorrowResponse borrowed = stub.withDeadlineAfter(3, TimeUnit.SECONDS)
                .borrow(BorrowRequest.newBuilder().setAdUnitId(adUnit).setWaitMs(1000).build());
            if (borrowed.getOutcome() == BorrowOutcome.BORROW_OUTCOME_NO_AD_YET) {
                System.err.println("BorrowReturn: no ad yet (the pool is filling)");
                System.exit(1);
            }
            ReturnResponse returned = stub.withDeadlineAfter(2, TimeUnit.SECONDS)
                .return_(ReturnRequest.newBuilder().setLeaseId(borrowed.getLease().getLeaseId()).setShown(shown).build());
            JsonFormat.Printer json = JsonFormat.printer().omittingInsignificantWhitespace();
            System.out.println("{\"borrow\":" + json.print(borrowed) + ",\"return\":" + json.print(returned) + "}");
        } catch (StatusRuntimeException error) {
            System.err.println("BorrowReturn: " + error.getStatus());
            System.exit(1);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
